/**
 * Word lists for the tenant generator: realistic, fictional names in the style of Microsoft's demo tenants
 * (Contoso, Fabrikam, …). Changing a list changes every generated tenant for a given seed.
 */

/** Fictional company names (Microsoft's standard sample companies). */
export const COMPANIES: readonly string[] = [
  'Contoso', 'Fabrikam', 'Northwind Traders', 'Adventure Works', 'Tailspin Toys', 'Woodgrove Bank', 'Litware',
  'Proseware', 'Wingtip Toys', 'Alpine Ski House', 'Coho Winery', 'Fourth Coffee', 'Lamna Healthcare', 'Relecloud',
  'Trey Research', 'Wide World Importers', 'Humongous Insurance', 'Margie’s Travel', 'Lucerne Publishing', 'VanArsdel',
];

/** Given names. */
export const FIRST_NAMES: readonly string[] = [
  'Adele', 'Alex', 'Allan', 'Amara', 'Ana', 'Andre', 'Anika', 'Ben', 'Bianca', 'Carlos', 'Chen', 'Chloe', 'Christie',
  'Daniel', 'Debra', 'Diego', 'Elena', 'Emily', 'Enrico', 'Fatima', 'Felix', 'Grady', 'Hana', 'Henrietta', 'Hiro',
  'Isaiah', 'Ivan', 'Jana', 'Johanna', 'Joni', 'Jordan', 'Kenji', 'Lee', 'Leila', 'Lidia', 'Lynne', 'Maria', 'Megan',
  'Miriam', 'Nestor', 'Nia', 'Noah', 'Olga', 'Omar', 'Patti', 'Pradeep', 'Priya', 'Quinn', 'Rafael', 'Ravi', 'Sakura',
  'Samir', 'Sara', 'Sofia', 'Tariq', 'Thomas', 'Uma', 'Victor', 'Wei', 'Yara', 'Yusuf', 'Zoe',
];

/** Family names. */
export const LAST_NAMES: readonly string[] = [
  'Abbott', 'Adams', 'Alvarez', 'Bakker', 'Bianchi', 'Brown', 'Chen', 'Costa', 'Dubois', 'Dvorak', 'Eriksson', 'Fischer',
  'Garcia', 'Gupta', 'Haddad', 'Hansen', 'Ito', 'Jensen', 'Kim', 'Kowalski', 'Larsen', 'Lopez', 'Martin', 'Moreau',
  'Nakamura', 'Nguyen', 'Novak', 'Okafor', 'Olsen', 'Patel', 'Petrov', 'Quintero', 'Rossi', 'Santos', 'Schmidt',
  'Silva', 'Singh', 'Smith', 'Sousa', 'Tanaka', 'Taylor', 'Varga', 'Vance', 'Wagner', 'Walker', 'Wilber', 'Wong',
  'Yamamoto', 'Young', 'Zielinski',
];

/** Departments, each with job titles. */
export const DEPARTMENTS: Readonly<Record<string, readonly string[]>> = {
  Finance: ['Financial Analyst', 'Accountant', 'Controller', 'Finance Manager', 'Payroll Specialist'],
  'Human Resources': ['HR Generalist', 'Recruiter', 'HR Business Partner', 'Benefits Specialist'],
  IT: ['Systems Administrator', 'Help Desk Technician', 'Cloud Engineer', 'IT Manager', 'Security Analyst'],
  Sales: ['Account Executive', 'Sales Manager', 'Sales Development Representative', 'Regional Sales Director'],
  Marketing: ['Marketing Specialist', 'Content Strategist', 'Product Marketing Manager', 'Brand Manager'],
  Engineering: ['Software Engineer', 'Senior Software Engineer', 'QA Engineer', 'Engineering Manager', 'Architect'],
  Legal: ['Corporate Counsel', 'Paralegal', 'Compliance Officer'],
  Operations: ['Operations Manager', 'Logistics Coordinator', 'Facilities Manager', 'Procurement Specialist'],
  'Customer Service': ['Customer Service Representative', 'Support Engineer', 'Customer Success Manager'],
  Executive: ['Chief Executive Officer', 'Chief Financial Officer', 'Chief Information Officer', 'Executive Assistant'],
};

/** Office locations. */
export const OFFICES: readonly string[] = ['Redmond', 'Seattle', 'New York', 'London', 'Dublin', 'Munich', 'Paris', 'Singapore', 'Sydney', 'Toronto'];

/** External domains guests come from. */
export const GUEST_DOMAINS: readonly string[] = [
  'fabrikam.com', 'northwindtraders.com', 'adventure-works.com', 'tailspintoys.com', 'litwareinc.com', 'gmail.com',
  'outlook.com', 'proseware.com',
];

/** Group templates: display name and whether it is a Microsoft 365 group (else a security group). */
export const GROUP_TEMPLATES: readonly { name: string; unified: boolean; description: string }[] = [
  { name: 'Finance Team', unified: true, description: 'Finance department collaboration' },
  { name: 'HR Team', unified: true, description: 'Human Resources team' },
  { name: 'IT Admins', unified: false, description: 'IT administrators with elevated access' },
  { name: 'Sales EMEA', unified: true, description: 'Sales team for Europe, Middle East and Africa' },
  { name: 'Copilot Pilot Users', unified: false, description: 'Users licensed for the Microsoft 365 Copilot pilot' },
  { name: 'Power Platform Makers', unified: false, description: 'Allowed to create apps, flows and agents' },
  { name: 'Marketing', unified: true, description: 'Marketing department' },
  { name: 'Engineering', unified: true, description: 'Product engineering' },
  { name: 'Intune Managed Devices', unified: false, description: 'Corporate devices enrolled in Intune' },
  { name: 'Executive Leadership', unified: true, description: 'Executive leadership team' },
  { name: 'VPN Users', unified: false, description: 'Remote access VPN users' },
  { name: 'Legal', unified: true, description: 'Legal and compliance' },
  { name: 'Finance Approvers', unified: false, description: 'Approvers for purchase orders above threshold' },
  { name: 'Customer Success', unified: true, description: 'Customer success managers' },
  { name: 'Conditional Access Exclusions', unified: false, description: 'Break-glass and service accounts' },
  { name: 'Project Phoenix', unified: true, description: 'Cross-team project workspace' },
  { name: 'Sales Americas', unified: true, description: 'Sales team for North and South America' },
  { name: 'Helpdesk Agents', unified: false, description: 'Tier 1 support agents' },
  { name: 'Social Club', unified: true, description: 'After-work activities' },
  { name: 'Data Analysts', unified: false, description: 'Access to analytics workspaces' },
];

/** Non-default environment templates: display name and SKU. */
export const ENVIRONMENT_TEMPLATES: readonly { name: string; sku: 'Production' | 'Sandbox' | 'Developer' | 'Trial' }[] = [
  { name: 'Sales Production', sku: 'Production' },
  { name: 'HR Sandbox', sku: 'Sandbox' },
  { name: 'Finance Production', sku: 'Production' },
  { name: 'IT Developer', sku: 'Developer' },
  { name: 'Marketing Trial', sku: 'Trial' },
  { name: 'Customer Service Production', sku: 'Production' },
  { name: 'Operations Sandbox', sku: 'Sandbox' },
  { name: 'Legal Production', sku: 'Production' },
];

/** Copilot Studio agent names. */
export const AGENT_NAMES: readonly string[] = [
  'HR Helpdesk', 'IT Service Desk Agent', 'Benefits Assistant', 'Sales Coach', 'Travel Booking Assistant',
  'Expense Helper', 'Onboarding Buddy', 'Customer Support Bot', 'Policy Q&A', 'Facilities Request Agent',
  'Procurement Assistant', 'Marketing Content Helper', 'Contract Review Agent', 'Security Awareness Coach',
  'Payroll Questions', 'Knowledge Base Agent', 'Order Status Bot', 'Field Service Assistant', 'Learning Guide',
  'Leave Request Agent',
];

/** Enterprise applications that appear as service principals (group members). */
export const ENTERPRISE_APPS: readonly string[] = ['Salesforce', 'ServiceNow', 'Zoom', 'Adobe Acrobat Sign', 'Workday', 'DocuSign', 'Slack', 'Atlassian Cloud'];

/** Azure regions per BAP location. */
export const REGIONS: readonly { location: string; azureRegions: readonly string[] }[] = [
  { location: 'unitedstates', azureRegions: ['westus', 'eastus', 'centralus'] },
  { location: 'europe', azureRegions: ['westeurope', 'northeurope'] },
];

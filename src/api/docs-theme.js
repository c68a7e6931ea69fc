/* global document, MutationObserver */
/**
 * Accessible names that Swagger UI 5 (the API documentation page, /api/docs, from @fastify/swagger-ui) leaves out
 * and that neither its configuration nor a stylesheet can give. Served from our own origin as
 * /api/docs/static/theme/vigil.js (the page's CSP: script-src 'self'); copied beside the compiled server by
 * scripts/build-assets.mjs. After every change of the page (Swagger UI renders with React, an operation's widgets
 * appear when it is opened or tried out), it:
 * - names the select or input of each parameter of "Try it out" after the parameter (`tr[data-param-name]`: the
 *   enum selects had no label, axe-core's select-name);
 * - names the request body's textarea "Request body" (it had an empty title: label);
 * - names the authorization dialog's close button, an icon only, "Close" (button-name);
 * - drops an aria-label that does not contain the button's visible text ("Apply credentials" on "Authorize",
 *   "Remove authorization" on "Logout": label-content-name-mismatch), so the name is the text a speech user says.
 * An attribute already set is left alone. test/portal/a11y.test.ts checks the page with axe-core in each state.
 */
(() => {
  const name = (element, label) => {
    if (!element.getAttribute('aria-label')) element.setAttribute('aria-label', label);
  };
  const label = () => {
    for (const row of document.querySelectorAll('.swagger-ui tr[data-param-name]'))
      for (const field of row.querySelectorAll('select, input, textarea')) name(field, row.dataset.paramName);
    for (const body of document.querySelectorAll('.swagger-ui textarea.body-param__text')) name(body, 'Request body');
    for (const close of document.querySelectorAll('.swagger-ui button.close-modal')) name(close, 'Close');
    for (const button of document.querySelectorAll('.swagger-ui button[aria-label]')) {
      const text = button.textContent.trim().toLowerCase();
      if (text && !button.getAttribute('aria-label').toLowerCase().includes(text)) button.removeAttribute('aria-label');
    }
  };
  new MutationObserver(label).observe(document.body, { childList: true, subtree: true });
})();

// An agent's reach as a picture: who can reach it on the left (audience → sign-in → channels), the agent in the
// middle, what it reaches on the right (tools → connectors, MCP servers → connections and data; knowledge, HTTP
// endpoints, other agents). Drawn with React Flow (@xyflow/react, reactflow.dev/learn), which sets node positions as
// inline styles through the DOM (allowed by the portal's `style-src 'self'`); its stylesheet is bundled by Vite.
// The same nodes and edges are listed as text below the picture, for keyboard and screen-reader users.
import { Background, Controls, Position, ReactFlow, type Edge, type Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './reach.css';
import { useMemo } from 'react';
import type { components } from '../api-types.ts';

type Reach = components['schemas']['AgentReach'];
type ReachNode = Reach['nodes'][number];

/** Words for node kinds. */
const KIND: Record<ReachNode['kind'], string> = {
  agent: 'Agent',
  channel: 'Channel',
  authentication: 'Sign-in',
  audience: 'Who may chat',
  tool: 'Tool',
  mcpServer: 'MCP server',
  connector: 'Connector',
  connection: 'Connection',
  knowledge: 'Knowledge',
  httpEndpoint: 'HTTP endpoint',
  childAgent: 'Child agent',
  connectedAgent: 'Connected agent',
  data: 'Data',
};

/** Words for risk flags. */
const FLAG: Record<string, string> = {
  'no-authentication': 'no sign-in',
  'broad-sharing': 'everyone',
  multitenant: 'any tenant',
  'maker-credentials': "maker's credentials",
  'public-website': 'public website',
  mcp: 'MCP',
  'custom-connector': 'custom connector',
  'insecure-http': 'insecure HTTP',
  'shared-with-tenant': 'shared with everyone',
};
/** Flags that describe rather than warn (an MCP tool is not a risk by itself). */
const NEUTRAL = new Set(['mcp']);
const risky = (n: ReachNode) => n.flags.some((f) => !NEUTRAL.has(f));

const COLUMN = 270;
const ROW = 150;

/**
 * Positions: a node's column is its distance from the agent along the edges (negative for who reaches it, positive
 * for what it reaches); nodes of a column are stacked and centred on the agent.
 */
function layout(reach: Reach): Map<string, { x: number; y: number }> {
  const out = new Map<string, number>([['agent', 0]]);
  // Outbound: breadth-first from the agent; inbound: breadth-first against the edges.
  let frontier = ['agent'];
  while (frontier.length) {
    const next: string[] = [];
    for (const id of frontier)
      for (const e of reach.edges.filter((x) => x.from === id))
        if (!out.has(e.to) && reach.nodes.find((n) => n.id === e.to)?.side === 'outbound') {
          out.set(e.to, (out.get(id) ?? 0) + 1);
          next.push(e.to);
        }
    frontier = next;
  }
  frontier = ['agent'];
  while (frontier.length) {
    const next: string[] = [];
    for (const id of frontier)
      for (const e of reach.edges.filter((x) => x.to === id))
        if (!out.has(e.from)) {
          out.set(e.from, (out.get(id) ?? 0) - 1);
          next.push(e.from);
        }
    frontier = next;
  }
  const columns = new Map<number, string[]>();
  for (const n of reach.nodes) {
    const c = out.get(n.id) ?? (n.side === 'inbound' ? -1 : 1);
    columns.set(c, [...(columns.get(c) ?? []), n.id]);
  }
  const pos = new Map<string, { x: number; y: number }>();
  for (const [c, ids] of columns) ids.forEach((id, i) => pos.set(id, { x: c * COLUMN, y: (i - (ids.length - 1) / 2) * ROW }));
  return pos;
}

function NodeLabel({ n }: { n: ReachNode }) {
  return (
    <>
      <span className="reach-kind">{KIND[n.kind]}</span>
      <span className="reach-label">{n.label}</span>
      {n.detail ? <span className="reach-detail">{n.detail}</span> : null}
      {n.flags.map((f) => (
        <span key={f} className="reach-flag">
          {FLAG[f] ?? f}
        </span>
      ))}
    </>
  );
}

/** `label` of a node for the text list: its kind, label, detail and flags in words. */
function describe(n: ReachNode | undefined): string {
  if (!n) return '?';
  const flags = n.flags.map((f) => FLAG[f] ?? f);
  return `${KIND[n.kind]} ${n.label}${n.detail ? ` (${n.detail})` : ''}${flags.length ? ` [${flags.join(', ')}]` : ''}`;
}

/** The reach graph of one agent and its text alternative. */
export function ReachGraph({ reach }: { reach: Reach }) {
  const { nodes, edges } = useMemo(() => {
    const pos = layout(reach);
    const nodes: Node[] = reach.nodes.map((n) => ({
      id: n.id,
      position: pos.get(n.id) ?? { x: 0, y: 0 },
      data: { label: <NodeLabel n={n} /> },
      className: `reach-node kind-${n.kind}${risky(n) ? ' risky' : ''}`,
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      draggable: false,
      connectable: false,
      ariaLabel: describe(n),
    }));
    const edges: Edge[] = reach.edges.map((e) => ({ id: e.id, source: e.from, target: e.to, label: e.label, focusable: false }));
    return { nodes, edges };
  }, [reach]);
  const byId = new Map(reach.nodes.map((n) => [n.id, n]));
  const inbound = reach.edges.filter((e) => byId.get(e.from)?.side === 'inbound');
  const outbound = reach.edges.filter((e) => byId.get(e.from)?.side !== 'inbound');
  const flagged = reach.nodes.filter(risky);

  return (
    <>
      <figure className="reach-figure" aria-labelledby="reach-caption">
        <figcaption id="reach-caption" className="small muted">
          Left: who can reach {reach.name ?? 'the agent'}. Right: what it reaches. Red boxes carry a risk flag. The same picture as a list follows.
        </figcaption>
        <div className="reach-canvas">
          <ReactFlow
            nodes={nodes}
            edges={edges}
            fitView
            minZoom={0.2}
            nodesDraggable={false}
            nodesConnectable={false}
            elementsSelectable
            proOptions={{ hideAttribution: false }}
          >
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        </div>
      </figure>
      {flagged.length ? (
        <p className="small">
          <strong>{flagged.length} flagged:</strong> {flagged.map((n) => `${n.label} (${n.flags.map((f) => FLAG[f] ?? f).join(', ')})`).join('; ')}
        </p>
      ) : null}
      {reach.notEvaluated.length ? (
        <ul className="small muted" aria-label="Not evaluated">
          {reach.notEvaluated.map((r) => (
            <li key={r}>Not evaluated: {r}</li>
          ))}
        </ul>
      ) : null}
      <details className="reach-list">
        <summary>
          The reach graph as a list ({reach.nodes.length} nodes, {reach.edges.length} links)
        </summary>
        <h3 id="reach-in">Who can reach it</h3>
        <ul aria-labelledby="reach-in">
          {inbound.map((e) => (
            <li key={e.id}>
              {describe(byId.get(e.from))} — {e.label} → {describe(byId.get(e.to))}
            </li>
          ))}
        </ul>
        <h3 id="reach-out">What it reaches</h3>
        <ul aria-labelledby="reach-out">
          {outbound.map((e) => (
            <li key={e.id}>
              {describe(byId.get(e.from))} — {e.label} → {describe(byId.get(e.to))}
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}

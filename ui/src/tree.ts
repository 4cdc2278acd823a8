// The resource tree's layout: the Application, its managed objects, and what they own (owner
// references, `parentRefs` of the resource-tree route), placed by dagre (a maintained layered
// graph layout) from left to right.
import dagre from '@dagrejs/dagre';
import type { ResourceNode } from './api';

export interface Managed {
  group?: string;
  version?: string;
  kind: string;
  namespace?: string;
  name: string;
  status?: string;
  health?: { status?: string; message?: string };
  hook?: boolean;
  syncWave?: number;
  requiresPruning?: boolean;
}

export interface TreeItem {
  id: string;
  kind: string;
  group: string;
  name: string;
  namespace: string;
  root: boolean;
  node?: ResourceNode;
  managed?: Managed;
  health?: string;
  healthMessage?: string;
  sync?: string;
  parents: string[];
}

export interface Placed extends TreeItem {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Layout {
  items: Placed[];
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
}

export const NODE_W = 236;
export const NODE_H = 56;

export const resKey = (group: string | undefined, kind: string, namespace: string | undefined, name: string) =>
  `${group || ''}/${kind}/${namespace || ''}/${name}`;

/** The items of the tree: one per live object, plus managed objects missing from the cluster. */
export function treeItems(appName: string, nodes: ResourceNode[], managed: Managed[]): TreeItem[] {
  const rootId = `app:${appName}`;
  const byKey = new Map<string, string>();
  const byUid = new Map<string, string>();
  const managedByKey = new Map(managed.map((m) => [resKey(m.group, m.kind, m.namespace, m.name), m]));
  for (const n of nodes) {
    const id = n.uid || resKey(n.group, n.kind, n.namespace, n.name);
    byKey.set(resKey(n.group, n.kind, n.namespace, n.name), id);
    if (n.uid) byUid.set(n.uid, id);
  }
  const items: TreeItem[] = [
    { id: rootId, kind: 'Application', group: 'argoproj.io', name: appName, namespace: '', root: true, parents: [] },
  ];
  for (const n of nodes) {
    const id = n.uid || resKey(n.group, n.kind, n.namespace, n.name);
    const k = resKey(n.group, n.kind, n.namespace, n.name);
    const m = managedByKey.get(k);
    const parents = (n.parentRefs || [])
      .map((p) => (p.uid && byUid.get(p.uid)) || byKey.get(resKey(p.group, p.kind, p.namespace, p.name)))
      .filter((p): p is string => !!p);
    items.push({
      id,
      kind: n.kind,
      group: n.group,
      name: n.name,
      namespace: n.namespace,
      root: false,
      node: n,
      managed: m,
      health: n.health?.status ?? m?.health?.status,
      healthMessage: n.health?.message ?? m?.health?.message,
      sync: m?.status,
      parents: parents.length ? parents : [rootId],
    });
  }
  for (const m of managed) {
    const k = resKey(m.group, m.kind, m.namespace, m.name);
    if (byKey.has(k)) continue;
    items.push({
      id: `missing:${k}`,
      kind: m.kind,
      group: m.group || '',
      name: m.name,
      namespace: m.namespace || '',
      root: false,
      managed: m,
      health: m.health?.status ?? 'Missing',
      healthMessage: m.health?.message,
      sync: m.status,
      parents: [rootId],
    });
  }
  return items;
}

export function layout(items: TreeItem[]): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 48, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  // Stable order: kind then name, so the same tree always draws the same way.
  const sorted = [...items].sort((a, b) => (a.root ? -1 : b.root ? 1 : a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)));
  for (const it of sorted) g.setNode(it.id, { width: NODE_W, height: NODE_H });
  const ids = new Set(items.map((i) => i.id));
  for (const it of sorted) for (const p of it.parents) if (ids.has(p)) g.setEdge(p, it.id);
  dagre.layout(g);
  const placed: Placed[] = sorted.map((it) => {
    const n = g.node(it.id);
    return { ...it, x: n.x - NODE_W / 2, y: n.y - NODE_H / 2, w: NODE_W, h: NODE_H };
  });
  const byId = new Map(placed.map((p) => [p.id, p]));
  const columns = columnsOf(placed);
  const edges = g.edges().map((e) => ({
    from: e.v,
    to: e.w,
    points: route(byId.get(e.v)!, byId.get(e.w)!, g.edge(e).points ?? [], columns),
  }));
  const gl = g.graph();
  return { items: placed, edges, width: (gl.width ?? 0) + 2, height: (gl.height ?? 0) + 2 };
}

/** The x ranges of the layout's columns (dagre puts the nodes of one rank at one x; all nodes
 * are NODE_W wide), left to right. */
function columnsOf(placed: Placed[]): [number, number][] {
  const lefts = [...new Set(placed.map((p) => Math.round(p.x)))].sort((a, b) => a - b);
  return lefts.map((l) => [l, l + NODE_W]);
}

/** An edge drawn only where no node is: straight dagre segments leave a box through its top or
 * bottom when the target is far above or below, and then cut through the boxes stacked in the
 * same column (the Deployment→ReplicaSet edge through the ConfigMap). This path leaves the
 * source at its right middle, turns only in the gaps between columns, and crosses a column
 * only at the height of one of dagre's dummy nodes (a slot dagre kept free for this edge). */
export function route(
  src: Placed,
  dst: Placed,
  dagrePoints: { x: number; y: number }[],
  columns: [number, number][],
): { x: number; y: number }[] {
  const start = { x: src.x + src.w, y: src.y + src.h / 2 };
  const end = { x: dst.x, y: dst.y + dst.h / 2 };
  if (end.x <= start.x) return [start, end];
  const inColumn = (x: number) => columns.find(([l, r]) => x > l && x < r);
  // Where the edge must cross a column between the two: dagre's slot for it there.
  const slots = dagrePoints
    .filter((p) => p.x > start.x && p.x < end.x && inColumn(p.x))
    .map((p) => ({ col: inColumn(p.x)!, y: p.y }));
  const gapBefore = (left: number) => {
    const prev = Math.max(start.x, ...columns.filter(([, r]) => r <= left).map(([, r]) => r));
    return (prev + left) / 2;
  };
  const out = [start];
  let y = start.y;
  for (const s of slots) {
    const gx = gapBefore(s.col[0]);
    out.push({ x: gx, y }, { x: gx, y: s.y }, { x: s.col[1], y: s.y });
    y = s.y;
  }
  const gx = gapBefore(end.x);
  out.push({ x: gx, y }, { x: gx, y: end.y }, end);
  return out;
}

/** A long name split so that its end is always drawn whole and only its start is shortened
 * with an ellipsis (Argo shows the end of the names of ReplicaSets and Pods, which differ only
 * there). */
export function nameParts(name: string): [string, string] {
  if (name.length <= 16) return ['', name];
  const tail = Math.min(11, name.length - 4);
  return [name.slice(0, name.length - tail), name.slice(name.length - tail)];
}

/** Argo's `Revision` info item of a node (`Rev:N` from `deployment.kubernetes.io/revision`). */
export function revisionOf(info: { name: string; value: string }[] | undefined): string {
  const v = info?.find((i) => i.name === 'Revision')?.value || '';
  return v.replace(/^Rev:/, 'rev:');
}

/** Short kind labels as Argo's tree shows them under its kind icons. */
const SHORT: Record<string, string> = {
  Application: 'app',
  Deployment: 'deploy',
  ReplicaSet: 'rs',
  Pod: 'pod',
  Service: 'svc',
  ConfigMap: 'cm',
  Secret: 'secret',
  StatefulSet: 'sts',
  DaemonSet: 'ds',
  Job: 'job',
  CronJob: 'cronjob',
  Ingress: 'ing',
  ServiceAccount: 'sa',
  Namespace: 'ns',
  PersistentVolumeClaim: 'pvc',
  EndpointSlice: 'epslice',
  Endpoints: 'ep',
  ControllerRevision: 'rev',
  Role: 'role',
  RoleBinding: 'rb',
  ClusterRole: 'crole',
  ClusterRoleBinding: 'crb',
  HorizontalPodAutoscaler: 'hpa',
  CustomResourceDefinition: 'crd',
  NetworkPolicy: 'netpol',
};

export const shortKind = (kind: string) => SHORT[kind] ?? kind.replace(/[a-z]/g, '').toLowerCase().slice(0, 6) ?? kind;

// The dependency graph a job is in (docs/reference/lifecycle.md#dependencies), drawn with React Flow and laid out by dagre: dependencies on the
// left, the jobs waiting for them on the right, each node a job's short id (a link to its page), type and status
// (a coloured dot and the word), the page's own job outlined and labelled. Statuses follow the console's event
// stream (live.ts patches this query's nodes), so the layout is computed once per shape, not per update. Loaded
// with the page only for a job that has dependencies or dependents (its own chunk: the library is not small).
// Its stylesheet is a file of the bundle (the page's policy allows no inline style elements from it).
import "@xyflow/react/dist/style.css";
import "./job-graph.css";
import dagre from "@dagrejs/dagre";
import { Alert, Badge, Box, Group, Text } from "@mantine/core";
import { Controls, Handle, MarkerType, Position, ReactFlow, ReactFlowProvider, useReactFlow, type Edge, type Node, type NodeProps } from "@xyflow/react";
import { useElementSize } from "@mantine/hooks";
import { useCallback, useEffect, useMemo, type FocusEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { shortId, StatusBadge } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { ErrorState, Loading } from "../ui/states";
import { useJobGraph } from "../data/job-detail";

export type JobGraph = ResponseBody<"/jobs/{id}/graph", "get">;
type GraphJob = JobGraph["nodes"][number];
/** A node's type line: a job's type, or "waitpoint" for a waitpoint the jobs wait on (docs/reference/lifecycle.md#waitpoints-and-durable-steps). */
const kindOf = (node: GraphJob) => ("kind" in node ? "waitpoint" : node.type);
/** Left to right where there is room; top to bottom on a narrow screen, where ranks side by side would be tiny. */
type Direction = "LR" | "TB";
type JobNodeData = { job: GraphJob; current: boolean; direction: Direction };
type JobNode = Node<JobNodeData, "job">;

const NODE_WIDTH = 190;
const NODE_HEIGHT = 78;

/** Below this width of the canvas the graph is laid out top to bottom. */
const NARROW = 600;

/** Positions from dagre for a graph's shape (ids and edges; statuses do not move anything). */
function layout(graph: JobGraph, direction: Direction): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: direction, nodesep: direction === "LR" ? 24 : 16, ranksep: direction === "LR" ? 64 : 40, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of graph.edges) g.setEdge(edge.from, edge.to);
  dagre.layout(g);
  return new Map(
    graph.nodes.map((node) => {
      // dagre's graph is untyped; layout() gave every node its centre.
      const { x, y } = g.node(node.id) as { x: number; y: number };
      // dagre gives centres; React Flow places by the top left corner.
      return [node.id, { x: x - NODE_WIDTH / 2, y: y - NODE_HEIGHT / 2 }];
    }),
  );
}

function JobGraphNode({ data }: NodeProps<JobNode>) {
  const { job, current, direction } = data;
  const flow = useReactFlow();
  // A link reached with Tab may lie outside the visible part of the canvas: bring its node to the centre.
  const reveal = useCallback(
    (event: FocusEvent<HTMLElement>) => {
      const canvas = event.currentTarget.closest(".react-flow");
      if (!canvas) return;
      // The browser may have scrolled the canvas's clipped box to show the focused link; React Flow pans instead.
      for (const box of canvas.querySelectorAll<HTMLElement>(".react-flow, .react-flow__renderer")) box.scrollTo(0, 0);
      canvas.scrollTo(0, 0);
      const outer = canvas.getBoundingClientRect();
      const inner = event.currentTarget.closest(".react-flow__node")?.getBoundingClientRect();
      if (!inner || (inner.left >= outer.left && inner.right <= outer.right && inner.top >= outer.top && inner.bottom <= outer.bottom)) return;
      const node = flow.getNode(job.id);
      if (node) void flow.setCenter(node.position.x + NODE_WIDTH / 2, node.position.y + NODE_HEIGHT / 2, { zoom: Math.max(flow.getZoom(), 0.8) });
    },
    [flow, job.id],
  );
  return (
    <Box
      className="job-graph-node"
      data-current={current || undefined}
      data-testid="graph-node"
      data-job-id={job.id}
      data-status={job.status}
      w={NODE_WIDTH}
      h={NODE_HEIGHT}
    >
      <Handle type="target" position={direction === "LR" ? Position.Left : Position.Top} isConnectable={false} />
      <Group gap={6} wrap="nowrap" justify="space-between">
        {current ? (
          <Text ff="monospace" size="sm" fw={700} aria-current="page">
            {shortId(job.id)}
          </Text>
        ) : (
          <RouterAnchor
            to="/jobs/$id"
            params={{ id: job.id }}
            ff="monospace"
            size="sm"
            fw={600}
            onFocus={reveal}
            aria-label={`Job ${shortId(job.id)}, ${kindOf(job)}, ${job.status}`}
          >
            {shortId(job.id)}
          </RouterAnchor>
        )}
        {current && (
          <Badge size="xs" variant="filled" color="indigo.8">
            This job
          </Badge>
        )}
      </Group>
      <Text size="xs" truncate="end" title={kindOf(job)}>
        {kindOf(job)}
      </Text>
      <StatusBadge status={job.status} />
      <Handle type="source" position={direction === "LR" ? Position.Right : Position.Bottom} isConnectable={false} />
    </Box>
  );
}

const NODE_TYPES = { job: JobGraphNode };
const FIT = { padding: 0.12, maxZoom: 1 };

function Flow({ graph, currentId, width, height }: { graph: JobGraph; currentId: string; width: number; height: number }) {
  const direction: Direction = width > 0 && width < NARROW ? "TB" : "LR";
  // The shape decides the layout; a status change keeps every node where it is.
  const shape = graph.nodes.map((node) => node.id).join() + "|" + graph.edges.map((edge) => `${edge.from}>${edge.to}`).join();
  const positions = useMemo(() => layout(graph, direction), [shape, direction]);
  // Fitted again when the canvas changes size (a phone turned, a window resized) or the layout changes.
  const flow = useReactFlow();
  useEffect(() => {
    if (width === 0 || height === 0) return;
    const frame = requestAnimationFrame(() => void flow.fitView(FIT));
    return () => cancelAnimationFrame(frame);
  }, [flow, positions, width, height]);
  const nodes: JobNode[] = graph.nodes.map((job) => ({
    id: job.id,
    type: "job",
    position: positions.get(job.id) ?? { x: 0, y: 0 },
    data: { job, current: job.id === currentId, direction },
    width: NODE_WIDTH,
    height: NODE_HEIGHT,
  }));
  const running = new Set(graph.nodes.filter((node) => node.status === "processing").map((node) => node.id));
  const edges: Edge[] = graph.edges.map((edge) => ({
    id: `${edge.from}>${edge.to}`,
    source: edge.from,
    target: edge.to,
    markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16, color: "var(--mantine-color-gray-6)" },
    // A dependency at work: its edge moves.
    animated: running.has(edge.from),
  }));
  return (
    <ReactFlow
      nodes={nodes}
      edges={edges}
      nodeTypes={NODE_TYPES}
      fitView
      fitViewOptions={FIT}
      minZoom={0.05}
      maxZoom={2}
      nodesDraggable={false}
      nodesConnectable={false}
      elementsSelectable={false}
      // The links inside the nodes are the keyboard's stops; a node itself is not one more.
      nodesFocusable={false}
      edgesFocusable={false}
      // The page scrolls as usual over the canvas; zoom with the buttons, a pinch or Ctrl and the wheel.
      zoomOnScroll={false}
      preventScrolling={false}
      zoomOnDoubleClick={false}
      ariaLabelConfig={{ "controls.ariaLabel": "Graph zoom controls" }}
    >
      <Controls showInteractive={false} position="top-right" />
    </ReactFlow>
  );
}

/** The graph section's body: the canvas, and a note when the API left the farthest jobs out. */
export function JobGraphView({ id }: { id: string }) {
  const size = useElementSize();
  const graph = useJobGraph(id);
  if (graph.isPending) return <Loading label="Loading the graph…" />;
  if (graph.isError) return <ErrorState error={graph.error} retry={() => void graph.refetch()} title="Could not load the graph" />;
  const { nodes, edges, truncated } = graph.data;
  return (
    <>
      <Text size="sm" c="dimmed" mb="xs" data-testid="graph-summary">
        {nodes.length} {nodes.length === 1 ? "job" : "jobs"}, {edges.length} {edges.length === 1 ? "dependency" : "dependencies"}; arrows point from a job to
        the jobs waiting for it.
      </Text>
      {truncated && (
        <Alert color="gray" mb="xs" role="note">
          Only the {nodes.length.toLocaleString()} nearest jobs of a larger graph are drawn.
        </Alert>
      )}
      <Box ref={size.ref} className="job-graph" data-testid="job-graph" role="group" aria-label="Dependency graph">
        <ReactFlowProvider>
          <Flow graph={graph.data} currentId={id} width={size.width} height={size.height} />
        </ReactFlowProvider>
      </Box>
    </>
  );
}

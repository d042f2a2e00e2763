// Side effect only: starts tracing before anything it instruments is loaded (the first import of server.ts).
import { startTracing } from "@conveyor/tracing";

// Probes and scrapes are not traced.
startTracing({ serviceName: "conveyor-api", untracedIncoming: new Set(["/healthz", "/readyz", "/metrics"]), express: true });

// Side effect only: starts tracing before anything it instruments is loaded (the first import of main.ts).
import { startTracing } from "@conveyor/tracing";

// The health server's probes and scrapes are not traced.
startTracing({ serviceName: "conveyor-worker", untracedIncoming: "all" });

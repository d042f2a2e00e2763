// Side effect only: starts tracing before anything it instruments is loaded (the first import of server.ts).
import { startTracing } from "./observability/tracing";

startTracing("conveyor-api");

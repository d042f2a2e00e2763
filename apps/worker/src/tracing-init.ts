// Side effect only: starts tracing before anything it instruments is loaded (the first import of main.ts).
import { startTracing } from "./tracing";

startTracing("conveyor-worker");

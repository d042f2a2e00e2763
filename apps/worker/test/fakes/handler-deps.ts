// HandlerDeps for calling a built-in handler against a fake: settings are parsed from environment-style strings
// with the worker's own schema (so defaults and conversions are the real ones), and the process logger's output
// is kept so a test can check that nothing secret reached it.
import { Writable } from "node:stream";
import type { Env } from "@conveyor/config";
import { createLogger } from "@conveyor/logger";
import { loadWorkerConfig } from "../../src/env";
import type { HandlerDeps } from "../../src/handlers/types";

export type TestDeps = HandlerDeps & { processOutput: string[] };

export function handlerDeps(env: Env): TestDeps {
  const processOutput: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      processOutput.push(String(chunk));
      done();
    },
  });
  const settings = loadWorkerConfig(env);
  return { settings, logger: createLogger({ service: "worker-test", stream, level: "debug" }), processOutput };
}

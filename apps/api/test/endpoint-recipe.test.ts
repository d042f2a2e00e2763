// CONTRIBUTING "Add an endpoint", step 1: a declaration reaches the router and the OpenAPI document only through
// endpoints/index.ts. An endpoint declared in endpoints/<resource>.ts and not listed there would compile, pass its
// file's own tests through supertest on another app, and never be served: this test names it and the step.
import { readdirSync } from "node:fs";
import path from "node:path";
import type { Endpoint } from "../src/declarations/endpoint";
import { endpoints } from "../src/endpoints";

const DIR = path.resolve(__dirname, "../src/endpoints");

const isEndpoint = (value: unknown): value is Endpoint =>
  typeof value === "object" && value !== null && "method" in value && "path" in value && "handle" in value && "operationId" in value;

/** Every endpoint a module exports, alone or in an array. */
function declaredIn(module: Record<string, unknown>): Endpoint[] {
  return Object.values(module).flatMap((value) => (Array.isArray(value) ? value.filter(isEndpoint) : isEndpoint(value) ? [value] : []));
}

/** `file: operationId` of each declared endpoint that `listed` does not hold. */
function unlisted(modules: Record<string, Record<string, unknown>>, listed: readonly Endpoint[]): string[] {
  const served = new Set(listed);
  return Object.entries(modules).flatMap(([file, module]) =>
    declaredIn(module)
      .filter((e) => !served.has(e))
      .map((e) => `${file}: ${e.operationId}`),
  );
}

const STEP = 'endpoints declared but not listed in apps/api/src/endpoints/index.ts (CONTRIBUTING, "Add an endpoint", step 1)';

describe("the endpoint recipe", () => {
  it("serves every endpoint declared under endpoints/: each is in endpoints/index.ts", async () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".ts") && f !== "index.ts");
    const modules: Record<string, Record<string, unknown>> = {};
    for (const file of files) modules[`endpoints/${file}`] = (await import(path.join(DIR, file))) as Record<string, unknown>;
    expect(Object.values(modules).flatMap(declaredIn).length).toBeGreaterThan(50);
    expect({ [STEP]: unlisted(modules, endpoints.all) }).toEqual({ [STEP]: [] });
  });

  it("names an endpoint that is declared and left out of the list (the check can fail)", () => {
    const [first, second] = endpoints.all;
    const modules = { "endpoints/things.ts": { thingEndpoints: [first, second], helper: () => 1, archiveThing: second } };
    expect(unlisted(modules, [first!])).toEqual([`endpoints/things.ts: ${second!.operationId}`, `endpoints/things.ts: ${second!.operationId}`]);
  });
});

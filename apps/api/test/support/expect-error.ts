// Asserting docs/reference/http.md#errors refusals: status, code, the error body's shape and the request id.
import type { Response } from "supertest";
import type { ErrorCode } from "../../src/services/infrastructure/errors";

export function expectError(res: Response, status: number, code: ErrorCode): void {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(res.body.error.message).toMatch(/\.$/);
  expect(Object.keys(res.body)).toEqual(["error"]);
  expect(res.headers["x-request-id"]).toBeTruthy();
  if (status === 401) expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
}

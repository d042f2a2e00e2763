// Page cursors that carry the id of the previous page's last row (schedules, waitpoints, alerts): opaque to clients,
// base64url of the id, and refused as a validation failure when they decode to anything but a uuid.
import { isUuid } from "@conveyor/db";
import { validationFailed } from "./errors";

export const encodeIdCursor = (id: string) => Buffer.from(id, "utf8").toString("base64url");

export function decodeIdCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!isUuid(id)) throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  return id;
}

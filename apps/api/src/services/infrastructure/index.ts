// What the resources stand on, and no resource of its own: their dependencies (deps.ts), the errors they raise
// (errors.ts, mapped to statuses by http/errors.ts) and validation, the audit writer, the job writer and admission/
// (may an organization add jobs now, and through which writer), the event hub and event streams, read routing between
// primary and replica, the job catalog, id page cursors (id-cursor.ts), and credentials: tokens, API-key, session and public-token secrets, invite
// tokens, passwords, the failed-login guard and the OIDC client.
export {};

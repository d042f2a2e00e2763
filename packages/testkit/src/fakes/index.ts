// Strict, scriptable fakes of the providers the built-in handlers call, for handler tests and system tests
// alike. Each answers what the real provider answers (status, body, headers), refuses what it refuses, and
// records every request. See fake-server.ts for the rules they share.
export * from "./fake-server";
export * from "./image-server";
export * from "./webhook-receiver";
export * from "./africastalking";
export * from "./daraja";
export * from "./mattermost";
export * from "./openai";
export * from "./postmark";
export * from "./resend";
export * from "./sendgrid";
export * from "./slack";

// Alerts (docs/reference/time.md#alerts): an organization's alert rules and the alerts they fired (rules.ts: the API's reads and writes,
// every one naming the org), and what the leader's evaluator reads and writes (evaluation.ts: each condition observed
// from Postgres, a rule's state moved under its row lock, the endpoints a webhook channel signs for). Nothing here
// sends anything: the channels are the worker's (apps/worker/src/maintenance/alert-notifier.ts).
export * from "./rules";
export * from "./evaluation";

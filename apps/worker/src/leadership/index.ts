// Leadership: which one of the worker replicas leads (a session advisory lock, kept on a direct connection), so that
// the dispatcher and the maintenance duties run in one place at a time; a new leader takes over within seconds.
export {};

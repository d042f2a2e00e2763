// The job state machine (docs/reference/lifecycle.md#state-machine): every change of a job's state is one of these functions, each writing the
// status, the dispatcher's queue row, the event and the notification together. No other code writes jobs.status or
// names an event; the states, the transitions and who calls them are written down in
// packages/contracts/src/job-states.ts.
export { insertJobs, insertJobIdempotently, type NewJob, type IdempotentInsert, type Refused, type CreationGuard } from "./create";
export {
  closeHandOverConnection,
  dueCandidates,
  handOver,
  handOverConnection,
  returnToLine,
  setEnvelope,
  stillInEnvelopes,
  type Candidate,
  type EnvelopePlan,
} from "./hand-over";
export { claimJobs, RATE_LIMIT_LEAD_MS, type ClaimRequest, type ClaimedJob, type ClaimWait } from "./start";
export { writeOutcomes, type LogRow, type Outcome } from "./finish";
export { cancelJobs, type CancelOutcome } from "./cancel";
export { amendResult } from "./amend";
export { debounceJob, type Debounced } from "./debounce";
export { bringForward, type BroughtForward } from "./run-now";
export { settleDependents, UnknownDependencyError, type Settled } from "./dependencies";
export { appendOutput, findJobOutput, recordProgress, storedOutputBytes, type OutputAppend, type ProgressReport } from "./live";

export { finishStep, readSteps, recordStep, type StepRow } from "./steps";
export { suspendForSleep, suspendForWait, type WaitSuspension } from "./suspend";
export {
  dropLeases,
  leaseJobs,
  liveLease,
  liveLeases,
  msUntilLeasable,
  LEASE_TAKE_OVER_GRACE_MS,
  type LeaseAttempt,
  type LeasedJob,
  type LeaseRequest,
  type LiveLease,
} from "./lease";

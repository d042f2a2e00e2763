// Every endpoint of the API, in the order the reference lists them: the registry (declarations/registry.ts) that the
// router and the OpenAPI document are both built from.
import { endpointRegistry } from "../declarations/registry";
import { accountEndpoints, signupEndpoint } from "./accounts";
import { alertEndpoints } from "./alert-rules";
import { apiKeyEndpoints } from "./api-keys";
import { auditLogEndpoints } from "./audit-log";
import { callbackEndpoints } from "./callbacks";
import { consoleEndpoints } from "./console";
import { eventEndpoints } from "./events";
import { flowControlEndpoints } from "./flow-control";
import { inviteEndpoints } from "./invites";
import { jobBatchEndpoints } from "./job-batch";
import { jobReadEndpoints } from "./job-reads";
import { jobStatsEndpoints } from "./job-stats";
import { jobSteeringEndpoints } from "./job-steering";
import { jobEndpoints } from "./jobs";
import { jobTypeEndpoints } from "./job-types";
import { workerProtocolEndpoints } from "./worker-protocol";
import { liveEndpoints } from "./live";
import { operationsEndpoints } from "./operations";
import { queueActivityEndpoints } from "./queue-activity";
import { referenceEndpoints } from "./reference";
import { retryEndpoints } from "./retries";
import { savedViewEndpoints } from "./saved-views";
import { scheduleEndpoints } from "./schedules";
import { sessionEndpoints } from "./sessions";
import { ssoEndpoints } from "./sso";
import { teamEndpoints } from "./team";
import { usageEndpoints } from "./usage";

import { waitpointEndpoints } from "./waitpoints";
import { webhookEndpointEndpoints } from "./webhook-endpoints";
import { workerEndpoints } from "./workers";
import { webhookRedeliveryEndpoints } from "./webhook-redelivery";

export const endpoints = endpointRegistry([
  // Before /jobs/{id}, which would take "stats" for an id.
  ...jobStatsEndpoints,
  // Issue 38 (the console's Retries view): /jobs/retries, before /jobs/{id}.
  ...retryEndpoints,
  ...jobEndpoints,
  ...jobBatchEndpoints,
  ...jobReadEndpoints,
  ...jobSteeringEndpoints,
  ...liveEndpoints,
  ...eventEndpoints,
  ...webhookEndpointEndpoints,
  ...webhookRedeliveryEndpoints,
  ...scheduleEndpoints,
  // Issue 38 (the Queues page's charts): /queues/activity, before /queues/{type}.
  ...queueActivityEndpoints,
  ...flowControlEndpoints,
  // Issue 38 (the console's Workers view).
  ...workerEndpoints,
  // Issue 45 (docs/reference/time.md#alerts): alert rules and the alerts they fired.
  ...alertEndpoints,
  // Issue 44 (docs/reference/lifecycle.md#your-own-workers): organization job types.
  ...jobTypeEndpoints,
  ...workerProtocolEndpoints,
  signupEndpoint,
  ...accountEndpoints,
  ...sessionEndpoints,
  ...apiKeyEndpoints,
  ...teamEndpoints,
  ...inviteEndpoints,
  ...auditLogEndpoints,
  ...usageEndpoints,
  ...ssoEndpoints,
  ...operationsEndpoints,
  ...referenceEndpoints,
  ...consoleEndpoints,
  ...callbackEndpoints,
  // Waitpoints (issue 34).
  ...waitpointEndpoints,
  // Saved views of the jobs list (issue 38).
  ...savedViewEndpoints,
]);

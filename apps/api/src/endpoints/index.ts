// Every endpoint of the API, in the order the reference lists them. The router and the OpenAPI document are
// both built from this list.
import type { Endpoint } from "../http/endpoint";
import { accountEndpoints, signupEndpoint } from "./accounts";
import { apiKeyEndpoints } from "./api-keys";
import { callbackEndpoints } from "./callbacks";
import { inviteEndpoints } from "./invites";
import { jobEndpoints } from "./jobs";
import { operationsEndpoints } from "./operations";
import { referenceEndpoints } from "./reference";
import { teamEndpoints } from "./team";

export const endpoints: readonly Endpoint[] = [
  ...jobEndpoints,
  signupEndpoint,
  ...accountEndpoints,
  ...apiKeyEndpoints,
  ...teamEndpoints,
  ...inviteEndpoints,
  ...operationsEndpoints,
  ...referenceEndpoints,
  ...callbackEndpoints,
];

// A real OpenID provider for tests: the `oidc-provider` package (node-oidc-provider, a certified OpenID provider), in
// a process of its own because it is an ES module. Its development login form takes any password; the login is the
// account, and the account's e-mail is the login itself, verified unless the login contains "unverified".
// Configuration comes as JSON in OIDC_PROVIDER_CONFIG: {port, clients: [{client_id, client_secret, redirect_uris}]}.
// Prints "oidc-provider listening on <issuer>" when it is ready.
import { generateKeyPairSync } from "node:crypto";
import Provider from "oidc-provider";

const config = JSON.parse(process.env.OIDC_PROVIDER_CONFIG ?? "{}");
const issuer = `http://127.0.0.1:${config.port}`;
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: "jwk" }), kid: "test-signing-key", use: "sig", alg: "RS256" };

const provider = new Provider(issuer, {
  clients: config.clients.map((client) => ({
    ...client,
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_post",
  })),
  jwks: { keys: [signingKey] },
  cookies: { keys: ["a cookie key for tests only, not a secret"] },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: id, email_verified: !id.includes("unverified"), name: id.split("@")[0] };
      },
    };
  },
});
// oidc-provider logs every refusal it sends; the tests read outcomes from the answers, not from here.
provider.on("server_error", (_ctx, error) => process.stderr.write(`oidc-provider server error: ${error.stack}\n`));

provider.listen(config.port, "127.0.0.1", () => process.stdout.write(`oidc-provider listening on ${issuer}\n`));
process.on("SIGTERM", () => process.exit(0));

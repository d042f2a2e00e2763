import {
  ConfigError,
  envSchema,
  flag,
  Joi,
  list,
  oneOf,
  parseEnv,
  publicUrl,
  setting,
  sharedEnv,
  urlPolicy,
  usesDevelopmentWebhookKey,
  webhookSecretsKey,
} from "@conveyor/config";

const message = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
};

describe("setting() and envSchema()", () => {
  const schema = envSchema({
    PORT: setting(Joi.number().port()).default(3000),
    NAME: setting(Joi.string()).optional(),
    SECRET: setting(Joi.string().min(32)).required(),
    URL: setting(publicUrl()).default(({ PORT }) => `http://localhost:${PORT as number}`),
  });
  const secret = "s".repeat(32);

  it("parses each variable under its own name, converted, with defaults for the unset ones", () => {
    expect(parseEnv(schema, { PORT: "8080", NAME: "conveyor", SECRET: secret, OTHER: "ignored" })).toEqual({
      PORT: 8080,
      NAME: "conveyor",
      SECRET: secret,
      URL: "http://localhost:8080",
    });
  });

  it("leaves an optional variable undefined, and treats an empty string as unset", () => {
    const config = parseEnv(schema, { SECRET: secret, NAME: "", PORT: "" });
    expect(config.NAME).toBeUndefined();
    expect(config.PORT).toBe(3000);
  });

  it("refuses a missing required variable and every bad value at once, naming each variable", () => {
    expect(message(() => parseEnv(schema, { PORT: "http" }))).toBe("Invalid configuration: PORT must be a number; SECRET is required");
    expect(message(() => parseEnv(schema, { SECRET: "short" }))).toBe("Invalid configuration: SECRET length must be at least 32 characters long");
  });

  it("computes a default from the other variables' parsed values, wherever it is declared", () => {
    const first = envSchema({
      URL: setting(publicUrl()).default(({ PORT }) => `http://localhost:${PORT as number}`),
      PORT: setting(Joi.number().port()).default(3000),
    });
    expect(parseEnv(first, {}).URL).toBe("http://localhost:3000");
    expect(parseEnv(first, { PORT: "08080" }).URL).toBe("http://localhost:8080");
    expect(parseEnv(first, { PORT: "8080", URL: "https://jobs.example.com/" }).URL).toBe("https://jobs.example.com");
  });

  it("is a plain joi object schema, so its variables can be listed and reused", () => {
    expect(Object.keys((schema.describe() as { keys: object }).keys).sort()).toEqual(["NAME", "PORT", "SECRET", "URL"]);
    expect(parseEnv(Joi.object({ DATABASE_URL: sharedEnv.DATABASE_URL }), {})).toEqual({ DATABASE_URL: "postgresql://postgres@localhost:5432/conveyor" });
  });

  it("refuses a rule that already says what unset means, whose type would be wrong", () => {
    expect(() => setting(Joi.number().default(1))).toThrow(/not on its rule/);
    expect(() => setting(Joi.string().required())).toThrow(/not on its rule/);
  });
});

describe("rules", () => {
  const parse = (rule: Joi.AnySchema, value: string) => parseEnv(Joi.object({ X: rule }), { X: value }).X as unknown;

  it("oneOf accepts only its values", () => {
    expect(parse(oneOf("a", "b"), "b")).toBe("b");
    expect(message(() => parse(oneOf("a", "b"), "c"))).toBe("Invalid configuration: X must be one of [a, b]");
  });

  it("flag reads true/false, 1/0, yes/no and on/off", () => {
    expect(["true", "1", "yes", "on"].map((v) => parse(flag(), v))).toEqual([true, true, true, true]);
    expect(["false", "0", "no", "off"].map((v) => parse(flag(), v))).toEqual([false, false, false, false]);
    expect(message(() => parse(flag(), "maybe"))).toBe("Invalid configuration: X must be a boolean");
  });

  it("list splits on commas, trims and drops blanks, and names an entry its pattern refuses", () => {
    expect(parse(list(), " a.js , b.js,,")).toEqual(["a.js", "b.js"]);
    expect(parse(list(), " , ")).toEqual([]);
    const types = list({ pattern: /^[a-z_]+$/, name: "job type" });
    expect(parse(types, "webhook, send_email")).toEqual(["webhook", "send_email"]);
    expect(message(() => parse(types, "webhook,Bad-Type"))).toBe('Invalid configuration: X names an invalid job type "Bad-Type"');
  });

  it("publicUrl takes http(s) URLs and drops trailing slashes", () => {
    expect(parse(publicUrl(), "https://jobs.example.com/base///")).toBe("https://jobs.example.com/base");
    expect(message(() => parse(publicUrl(), "ftp://jobs.example.com"))).toBe(
      "Invalid configuration: X must be a valid uri with a scheme matching the http|https pattern",
    );
  });
});

describe("sharedEnv", () => {
  const shared = envSchema(sharedEnv);

  it("works on a developer machine with nothing set (docs/reference/operations.md#configuration)", () => {
    expect(parseEnv(shared, {})).toEqual({
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      DATABASE_URL: "postgresql://postgres@localhost:5432/conveyor",
      DATABASE_POOLER_PREPARED_STATEMENTS: false,
      DATABASE_POOL_SIZE: 10,
      REDIS_URL: "redis://localhost:6379",
      REDIS_SENTINEL_NAME: "mymaster",
      REDIS_PREFIX: "conveyor",
      RETRY_BASE_MS: 1000,
      WEBHOOK_ALLOW_HTTP: false,
      ALLOW_PRIVATE_NETWORK: false,
      WEBHOOK_SECRETS_KEY: expect.any(String),
    });
    expect(usesDevelopmentWebhookKey(parseEnv(shared, {}))).toBe(true);
  });

  it("needs WEBHOOK_SECRETS_KEY in production, as 32 bytes of base64", () => {
    expect(message(() => parseEnv(shared, { NODE_ENV: "production" }))).toBe("Invalid configuration: WEBHOOK_SECRETS_KEY is required");
    expect(message(() => parseEnv(shared, { WEBHOOK_SECRETS_KEY: Buffer.alloc(16).toString("base64") }))).toBe(
      "Invalid configuration: WEBHOOK_SECRETS_KEY must be 32 bytes, base64-encoded",
    );
    const key = Buffer.alloc(32, 7);
    const config = parseEnv(shared, { NODE_ENV: "production", WEBHOOK_SECRETS_KEY: key.toString("base64") });
    expect(webhookSecretsKey(config)).toEqual(key);
    expect(usesDevelopmentWebhookKey(config)).toBe(false);
  });

  it("gives the URL policy of WEBHOOK_ALLOW_HTTP and ALLOW_PRIVATE_NETWORK", () => {
    expect(urlPolicy(parseEnv(shared, { WEBHOOK_ALLOW_HTTP: "yes" }))).toEqual({ allowHttp: true, allowPrivateNetwork: false });
    expect(urlPolicy(parseEnv(shared, { ALLOW_PRIVATE_NETWORK: "on" }))).toEqual({ allowHttp: false, allowPrivateNetwork: true });
  });
});

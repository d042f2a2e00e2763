// Type-level checks of the settings layer: `npm run typecheck` fails if a parsed type drifts from its rule.
// At run time these only build schemas.
import { envSchema, flag, Joi, list, oneOf, parseEnv, publicUrl, setting, type ConfigOf, type SharedConfig } from "@conveyor/config";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(): T | undefined => undefined;

const schema = envSchema({
  PORT: setting(Joi.number().port()).default(3000),
  NAME: setting(Joi.string()).optional(),
  SECRET: setting(Joi.string().min(32)).required(),
  MODE: setting(oneOf("fast", "safe")).default("safe"),
  VERBOSE: setting(flag()).default(false),
  PLUGINS: setting(list()).default([]),
  TYPES: setting(list()).optional(),
  URL: setting(publicUrl()).default(({ PORT }) => `http://localhost:${PORT as number}`),
});

type Config = {
  PORT: number;
  NAME: string | undefined;
  SECRET: string;
  MODE: "fast" | "safe";
  VERBOSE: boolean;
  PLUGINS: string[];
  TYPES: string[] | undefined;
  URL: string;
};

describe("the settings' TypeScript types", () => {
  it("follow each rule and what unset means", () => {
    expectType<Equal<ConfigOf<typeof schema>, Config>>();
    const config = parseEnv(schema, { SECRET: "s".repeat(32) });
    expectType<Equal<typeof config, Config>>();
    expect(config.MODE).toBe("safe");
  });

  it("type the shared variables", () => {
    expectType<Equal<SharedConfig["NODE_ENV"], "development" | "production" | "test">>();
    expectType<Equal<SharedConfig["LOG_LEVEL"], "error" | "warn" | "info" | "debug">>();
    expectType<Equal<SharedConfig["DATABASE_POOL_SIZE"], number>>();
    expectType<Equal<SharedConfig["PUBLIC_URL"], string | undefined>>();
    expectType<Equal<SharedConfig["TEMPLATES_DIR"], string | undefined>>();
    expectType<Equal<SharedConfig["ALLOW_PRIVATE_NETWORK"], boolean>>();
  });

  it("refuse defaults of the wrong type and settings that do not say what unset means", () => {
    // @ts-expect-error a number's default is a number
    setting(Joi.number()).default("3000");
    // @ts-expect-error an enum's default is one of its values
    setting(oneOf("fast", "safe")).default("slow");
    // @ts-expect-error a list's default is a list
    setting(list()).default("a,b");
    // @ts-expect-error a plain joi rule does not carry its parsed type
    envSchema({ PORT: Joi.number() });
    // @ts-expect-error setting() alone has not said what unset means
    expect(() => envSchema({ PORT: setting(Joi.number()) })).toThrow("PORT is not a setting");
    const config = parseEnv(schema, { SECRET: "s".repeat(32) });
    // @ts-expect-error an optional variable may be undefined
    const name: string = config.NAME;
    // @ts-expect-error only the schema's variables exist
    void config.OTHER;
    void name;
  });
});

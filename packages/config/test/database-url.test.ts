// Postgres URLs as libpq reads them, the multi-host failover form included (node-postgres and WHATWG URL refuse it).
import { ConfigError, envSchema, maskUrl, parseDatabaseUrl, parseEnv, sharedEnv } from "@conveyor/config";

describe("parseDatabaseUrl", () => {
  it("splits a multi-host URL into one single-host URL per host, in order, without target_session_attrs", () => {
    expect(parseDatabaseUrl("postgresql://app:s3cret@pg1:5433,pg2,[::1]:6000/conveyor?sslmode=disable&target_session_attrs=read-write")).toEqual({
      targetSessionAttrs: "read-write",
      hosts: [
        { host: "pg1", port: 5433, url: "postgresql://app:s3cret@pg1:5433/conveyor?sslmode=disable" },
        { host: "pg2", port: 5432, url: "postgresql://app:s3cret@pg2:5432/conveyor?sslmode=disable" },
        { host: "::1", port: 6000, url: "postgresql://app:s3cret@[::1]:6000/conveyor?sslmode=disable" },
      ],
    });
  });

  it("reads a plain URL as one host with any role", () => {
    expect(parseDatabaseUrl("postgres://localhost/db")).toEqual({
      targetSessionAttrs: "any",
      hosts: [{ host: "localhost", port: 5432, url: "postgres://localhost:5432/db" }],
    });
  });

  it.each([
    ["mysql://h/db", /postgres:\/\//],
    ["postgresql://h1,,h2/db", /empty host/],
    ["postgresql://h1:99999/db", /out of range/],
    ["postgresql://h1/db?target_session_attrs=leader", /target_session_attrs=leader/],
  ])("refuses %s", (url, problem) => {
    expect(() => parseDatabaseUrl(url)).toThrow(problem);
  });
});

describe("DATABASE_* settings", () => {
  const schema = envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL, DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL });

  it("accepts a multi-host DATABASE_URL, which a URI rule refused", () => {
    const url = "postgresql://app@pg1:5432,pg2:5432/conveyor?target_session_attrs=read-write";
    expect(parseEnv(schema, { DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });

  it("names the variable and the problem", () => {
    expect(() => parseEnv(schema, { DATABASE_DIRECT_URL: "postgresql://pg1/db?target_session_attrs=sometimes" })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { DATABASE_DIRECT_URL: "postgresql://pg1/db?target_session_attrs=sometimes" })).toThrow(/DATABASE_DIRECT_URL/);
  });

  it("masks the password of a multi-host URL", () => {
    expect(maskUrl("postgresql://app:s3cret@pg1:5432,pg2:5432/conveyor")).toBe("postgresql://app:***@pg1:5432,pg2:5432/conveyor");
  });
});

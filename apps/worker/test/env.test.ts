// The worker's configuration: its variables under their own names, typed from the schema.
import { ConfigError } from "@conveyor/config";
import { loadWorkerConfig, type WorkerConfig } from "../src/env";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(): T | undefined => undefined;

describe("loadWorkerConfig", () => {
  it("applies the documented defaults, leaving optional settings undefined", () => {
    const config = loadWorkerConfig({});
    expect(config).toMatchObject({
      WORKER_CONCURRENCY: 10,
      WORKER_PLUGINS: [],
      WORKER_METRICS_PORT: 9464,
      EMAIL_PROVIDER: "sendgrid",
      PROVIDER_TIMEOUT_MS: 15_000,
    });
    expect([config.WORKER_TYPES, config.PUBLIC_URL, config.EMAIL_PROVIDER_API_KEY, config.TEMPLATES_DIR]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("converts lists, numbers and PUBLIC_URL (no trailing slash, so callback paths append cleanly)", () => {
    const config = loadWorkerConfig({
      WORKER_TYPES: "webhook, send_email,",
      WORKER_PLUGINS: "./a.js",
      WORKER_CONCURRENCY: "3",
      PUBLIC_URL: "https://jobs.example.com/",
    });
    expect(config).toMatchObject({
      WORKER_TYPES: ["webhook", "send_email"],
      WORKER_PLUGINS: ["./a.js"],
      WORKER_CONCURRENCY: 3,
      PUBLIC_URL: "https://jobs.example.com",
    });
  });

  it("refuses bad values, naming each variable", () => {
    expect(() => loadWorkerConfig({ WORKER_TYPES: "webhook,Bad-Type", EMAIL_PROVIDER: "mailgun" })).toThrow(
      new ConfigError('Invalid configuration: WORKER_TYPES names an invalid job type "Bad-Type"; EMAIL_PROVIDER must be one of [sendgrid, resend, postmark]'),
    );
  });

  it("types each setting from its rule", () => {
    expectType<Equal<WorkerConfig["WORKER_TYPES"], string[] | undefined>>();
    expectType<Equal<WorkerConfig["WORKER_PLUGINS"], string[]>>();
    expectType<Equal<WorkerConfig["WORKER_CONCURRENCY"], number>>();
    expectType<Equal<WorkerConfig["EMAIL_PROVIDER"], "sendgrid" | "resend" | "postmark">>();
    expectType<Equal<WorkerConfig["EMAIL_PROVIDER_API_KEY"], string | undefined>>();
    expectType<Equal<WorkerConfig["MPESA_TRANSACTION_TYPE"], "CustomerPayBillOnline" | "CustomerBuyGoodsOnline">>();
    expectType<Equal<WorkerConfig["PUBLIC_URL"], string | undefined>>();
  });
});

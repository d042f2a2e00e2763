// `npm start`: the whole of Conveyor on one machine for development. Migrates the database (creating it if
// needed), builds the web console if it is missing or stale, then runs the API and one worker from source,
// restarting the worker if it crashes, and stops both cleanly on Ctrl-C. Production runs `npm run start:api` and `npm run start:worker` separately.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { ensureConsoleBuilt } from "@conveyor/console/build";
import { envSchema, loadDotEnv, parseEnv, runMain, sharedEnv, StartupError } from "@conveyor/config";
import { databaseUnreachableMessage, migrateDatabase, migrationReport, resolveDatabaseUrl } from "@conveyor/db";
import { connectRedis } from "@conveyor/queue";

const root = path.resolve(__dirname, "..");
const MAX_WORKER_RESTARTS_PER_MINUTE = 5;

function run(name: string, entry: string): ChildProcess {
  return spawn(process.execPath, ["--conditions=conveyor-source", "--import", "tsx", entry], { cwd: root, stdio: "inherit", env: process.env });
}

async function main(): Promise<void> {
  // The runtime the repository pins (node_modules/.bin/node, which npm scripts find first); the API and worker it
  // starts run on the same binary (process.execPath) and say so too.
  process.stdout.write(`Conveyor on Node.js ${process.version} (${process.execPath})\n`);
  loadDotEnv();
  const env = parseEnv(
    envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL, DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL, REDIS_URL: sharedEnv.REDIS_URL }),
    process.env,
  );
  const { REDIS_URL } = env;
  // As `npm run db:migrate` does: Postgres itself, never a transaction pooler, and on a multi-host URL the host that
  // target_session_attrs picks (new URL() refuses libpq's "h1:5432,h2:5433" form).
  const DATABASE_URL = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
  const applied = await resolveDatabaseUrl(DATABASE_URL, "postgres")
    .then((url) => migrateDatabase(url))
    .catch((error) => {
      throw new StartupError(databaseUnreachableMessage(error, DATABASE_URL) ?? `Migration failed: ${(error as Error).message}`);
    });
  process.stdout.write(`${migrationReport(applied)}\n`);
  (await connectRedis(REDIS_URL, "producer")).disconnect();
  try {
    ensureConsoleBuilt((line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    // The API answers JSON without it, and its / says the console is missing.
    process.stderr.write(`The console could not be built (${(error as Error).message}); the API runs without it.\n`);
  }

  let stopping = false;
  const api = run("api", "apps/api/src/server.ts");
  let worker = run("worker", "apps/worker/src/main.ts");
  const restarts: number[] = [];

  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const child of [api, worker]) if (child.exitCode === null) child.kill(signal);
  };
  process.on("SIGINT", () => stopAll("SIGINT"));
  process.on("SIGTERM", () => stopAll("SIGTERM"));

  const exited = (child: ChildProcess) => new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));

  api.once("exit", (code) => {
    if (!stopping) process.stderr.write(`API exited (code ${code}); stopping the worker.\n`);
    stopAll("SIGTERM");
  });
  const superviseWorker = async (): Promise<number> => {
    for (;;) {
      const code = await exited(worker);
      if (stopping) return code;
      const now = Date.now();
      restarts.push(now);
      while (restarts[0]! < now - 60_000) restarts.shift();
      if (restarts.length > MAX_WORKER_RESTARTS_PER_MINUTE) {
        process.stderr.write(`Worker exited (code ${code}) ${restarts.length} times in a minute; stopping.\n`);
        stopAll("SIGTERM");
        return code || 1;
      }
      process.stderr.write(`Worker exited (code ${code}); restarting it.\n`);
      worker = run("worker", "apps/worker/src/main.ts");
    }
  };
  const [apiCode, workerCode] = await Promise.all([exited(api), superviseWorker()]);
  process.exit(apiCode || workerCode);
}

runMain(main);

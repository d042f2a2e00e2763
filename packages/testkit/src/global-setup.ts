// Jest global setup: one migrated template database for the whole run.
import { prepareTemplate } from "./postgres";

export default async function globalSetup(): Promise<void> {
  await prepareTemplate();
}

// The soak's report (report.json), which the HTML page draws.
/** Bytes, the statistics' live and dead row estimates, and how many times autovacuum vacuumed the table. */
export type TableSize = { heap: number; indexes: number; total: number; live: number; dead: number; autovacuums: number };

export type SoakSample = {
  /** Seconds since the soak began. */
  atS: number;
  acceptedPerS: number;
  /** Jobs whose handler reached its provider for the first time, per second. */
  deliveredPerS: number;
  refusedPerS: number;
  /** Start lateness (POST → the handler's provider request) of the jobs first delivered in the interval, ms. */
  latenessP50: number;
  latenessP99: number;
  rssMb: Record<string, number>;
  /** Bytes per table of the soak's database (tables over 256 kB or with over 1,000 dead rows), sampled at most every 30 s. */
  tables: Record<string, TableSize>;
};

export type SoakReport = {
  startedAt: string;
  endedAt: string;
  options: Record<string, unknown>;
  summary: {
    sent: number;
    accepted: number;
    refused: number;
    settledBeforeRetention: number;
    statuses: Record<string, number>;
    /** Accepted jobs neither final in Postgres nor settled before a retention pass. */
    lost: number;
    lostExamples: number[];
    notFinal: number;
    doneWithoutDelivery: number;
    duplicates: number;
    /** Duplicates whose second delivery came more than 2 minutes after every kill and Redis restart. */
    unexplainedDuplicates: number;
    kills: number;
    redisRestarts: number;
    retentionPasses: number;
    deletedByRetention: number;
  };
  events: { atS: number; kind: string; detail: string }[];
  retentionPasses: { atS: number; deleted: number; settled: number; seconds: number }[];
  samples: SoakSample[];
  finalTables: Record<string, TableSize>;
};

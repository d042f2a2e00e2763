// Pages and their assets served by the API set their own policy: the API's default (JSON only, `default-src
// 'none'`) would block them.
import type { Response } from "express";

export type Page = { type: string; body: string | Buffer; policy: string; cache: string };

export function sendPage(res: Response, page: Page): void {
  res.setHeader("Content-Type", page.type);
  res.setHeader("Cache-Control", page.cache);
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Content-Security-Policy", page.policy);
  res.send(page.body);
}

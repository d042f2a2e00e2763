// The fields response bodies share, written once for every responses-*.ts file.
import Joi from "joi";
import { JOB_STATUSES, ROLES } from "@conveyor/contracts";

export const id = () => Joi.string().guid().description("UUID v7.");
export const timestamp = () => Joi.string().isoDate().description("ISO 8601 UTC with milliseconds and Z.");
export const email = () => Joi.string().email({ tlds: { allow: false } });
export const role = () => Joi.string().valid(...ROLES);
export const jobStatus = () => Joi.string().valid(...JOB_STATUSES);
export const anyObject = () => Joi.object().unknown(true);
export const count = () => Joi.number().integer().min(0);

// Body fields shared by the account, invite and team routes.
import Joi from "joi";
import { passwordProblem, passwordTooLong } from "../services/infrastructure/passwords";

/** Trimmed and lower-cased before it is checked (the only field converted in a body). */
export const emailField = Joi.string()
  .trim()
  .lowercase()
  .max(254)
  .email({ tlds: { allow: false } })
  .prefs({ convert: true });

/** A password being set: 15 characters to 72 bytes. */
export const newPasswordField = Joi.string().custom((value: string, helpers) => {
  const problem = passwordProblem(value);
  return problem ? helpers.message({ custom: problem }) : value;
});

/** A password being checked: any length bcrypt can compare without truncating. */
export const passwordField = Joi.string()
  .min(1)
  .custom((value: string, helpers) => {
    const problem = passwordTooLong(value);
    return problem ? helpers.message({ custom: problem }) : value;
  });

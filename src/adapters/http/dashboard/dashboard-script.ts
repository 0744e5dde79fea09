/**
 * The dashboard's script, served at `/dashboard.js`: vanilla JS with no build step, assembled from one
 * constant per concern and the schedule-in-words function's own source, in one strict scope.
 */
import { scheduleInWords } from "./schedule-in-words.js";
import { SCRIPT_APP } from "./script-app.js";
import { SCRIPT_CORE } from "./script-core.js";
import { SCRIPT_FORM } from "./script-form.js";
import { SCRIPT_LIST } from "./script-list.js";
import { SCRIPT_TASK } from "./script-task.js";
import { SCRIPT_VIEWS } from "./script-views.js";

export const DASHBOARD_SCRIPT = [
  '(() => {\n"use strict";',
  // Run from source under tsx, esbuild's keepNames wraps the function's inner arrows in `__name`.
  "const __name = (target) => target;",
  scheduleInWords.toString(),
  SCRIPT_CORE,
  SCRIPT_VIEWS,
  SCRIPT_LIST,
  SCRIPT_TASK,
  SCRIPT_FORM,
  SCRIPT_APP,
  "})();\n",
].join("\n");

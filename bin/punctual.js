#!/usr/bin/env node
import { main } from "../dist/adapters/cli/main.js";

process.exitCode = await main(process.argv);

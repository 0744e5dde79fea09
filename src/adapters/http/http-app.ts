/**
 * `buildHttpApp()`: the Fastify app of `punctual serve` (docs/api.md), also what the HTTP tests start on
 * port 0. Routes are declared once (route-spec.ts) and registered as plugins by group; the OpenAPI
 * document is generated from the same declarations. Every error answers `application/problem+json` from
 * the one error map (http-reply.ts); nothing a client sends can cause a 500.
 */
import Fastify, { LogController } from "fastify";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Actor } from "../../application/access/actor.js";
import { checkJsonTextDepth } from "../../application/policy/limits.js";
import type { IdempotencyRepository } from "../../domain/ports/idempotency-repository.js";
import type { TaskService } from "../../application/tasks/task-service.js";
import type { TokenService } from "../../application/access/token-service.js";
import type { Instant } from "../../domain/time.js";
import { SchedulerMetrics } from "../metrics/scheduler-metrics.js";
import { answerClientError } from "./client-error.js";
import { buildOpenApiDocument } from "./openapi.js";
import { BODY_LIMIT_BYTES, HttpProblem, problemOf } from "./problem.js";
import { addressKey, RateLimiter } from "./rate-limit.js";
import type { AddressLimitOptions, RateLimitOptions } from "./rate-limit.js";
import { parseRequest } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import type { SystemRouteDeps } from "./system-routes.js";
import { systemRoutes } from "./system-routes.js";
import { runRoutes } from "./run-routes.js";
import { taskRoutes } from "./task-routes.js";
import { scheduleRoutes } from "./schedule-routes.js";
import { calendarRoutes } from "./calendar-routes.js";
import { dashboardRoutes } from "./dashboard/dashboard-routes.js";
import { callbackRoutes } from "./callback-routes.js";
import type { CallbackRouteDeps } from "./callback-routes.js";
import { replicaRoutes } from "./replica-routes.js";
import type { ReplicaRouteDeps } from "./replica-routes.js";
import { registerDeerflowRoutes } from "./deerflow-routes.js";
import type { DeerflowTarget } from "./deerflow-routes.js";
import { AuthProxy } from "./auth-proxy.js";
import type { AuthProxyOptions } from "./auth-proxy.js";
import type { OwnerId } from "../../domain/ids.js";
import { registerLangGraphProxy } from "./langgraph-proxy.js";
import type { AgentServerConfig } from "../launchers/agent/agent-servers.js";
import { registerLangGraphCronRoutes } from "./langgraph-crons-routes.js";
import type { LangGraphTarget } from "./langgraph-crons-routes.js";
import { methodsServing } from "./registered-routes.js";
import type { RegisteredRoute } from "./registered-routes.js";
import { tokenOf } from "./request-token.js";
import { replyWithProblem, sendAnswer, sendProblem } from "./http-reply.js";

export interface HttpAppOptions {
  readonly tasks: TaskService;
  readonly tokens: TokenService;
  readonly idempotency: IdempotencyRepository;
  readonly health: SystemRouteDeps["health"];
  readonly now: () => Instant;
  /** @default a fresh registry */
  readonly metrics?: SchedulerMetrics;
  /** A pino logger. @default no logging */
  readonly logger?: FastifyBaseLogger;
  /** Per-token rate limit; `false` turns it off (and the per-address limits with it). @default 100 burst, 20 per second */
  readonly rateLimit?: RateLimitOptions | false;
  /**
   * Per client address (docs/security.md#callback-routes): the callback routes' rate, and how many failed
   * attempts (401, or a callback's 404) an address may make before it is answered 429. `false` turns both
   * off. @default callbacks 300 burst, 100 per second; failures 30 burst, 1 per second
   */
  readonly addressLimits?: AddressLimitOptions | false;
  /** True once shutdown began: `/readyz` answers 503. */
  readonly isShuttingDown?: () => boolean;
  /** The version shown in the OpenAPI document. */
  readonly version?: string;
  /** `GET /v1/replicas` (docs/api.md#get-v1replicas); absent: not served. */
  readonly replicas?: Omit<ReplicaRouteDeps, "now">;
  /** The callback routes (`/v1/runs/{id}/complete`, `/v1/hooks/agent/{server}`); absent: not served. */
  readonly callbacks?: CallbackRouteDeps;
  /** DeerFlow's scheduled-task routes over this DeerFlow server (`serve --deerflow-api`); absent: off. */
  readonly deerflow?: DeerflowTarget;
  /** Identity from a trusted authenticating proxy (docs/security.md#auth-proxy); absent: off. */
  readonly authProxy?: AuthProxyOptions;
  /** LangGraph's crons routes under `/langgraph/SERVER`, one set per server (`serve --langgraph-api`). */
  readonly langGraph?: readonly LangGraphTarget[];
  /** Agent servers whose other paths pass through under `/langgraph/SERVER` (`--langgraph-proxy`). */
  readonly langGraphProxy?: readonly AgentServerConfig[];
}

const actors = new WeakMap<FastifyRequest, Actor>();

/** docs/security.md#callback-routes: per client address, the callback routes' rate. */
const CALLBACK_LIMIT: RateLimitOptions = { burst: 300, perSecond: 100 };
/** Per client address, failed attempts (401, a callback's 404): then 429 until one is back. */
const FAILURE_LIMIT: RateLimitOptions = { burst: 30, perSecond: 1 };

/**
 * The longest path parameter routed: Node's header limit (16 KiB, which bounds the request line), so
 * every parameter a request can carry reaches its route, behind the token check, and the route judges
 * it (no such task or run, a thread with no tasks). Only a server started with a larger
 * `--max-http-header-size` can see a longer one, answered 404 by the router.
 */
const MAX_PATH_PARAM_LENGTH = 16 * 1024;

/** Builds the app (not listening): `await app.listen({ host, port })` serves it. */
export async function buildHttpApp(options: HttpAppOptions): Promise<FastifyInstance> {
  const metrics = options.metrics ?? new SchedulerMetrics({ processMetrics: false });
  const limiter = options.rateLimit === false ? null : new RateLimiter(options.rateLimit);
  const addressLimits =
    options.rateLimit === false || options.addressLimits === false
      ? null
      : {
          callbacks: new RateLimiter(options.addressLimits?.callbacks ?? CALLBACK_LIMIT),
          failures: new RateLimiter(options.addressLimits?.failures ?? FAILURE_LIMIT),
        };
  const authProxy = options.authProxy === undefined ? null : new AuthProxy(options.authProxy);
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit: BODY_LIMIT_BYTES,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Errors the router raises before any route runs answer problems like every other error.
    frameworkErrors: (error, request, reply) => {
      void sendProblem(
        reply,
        error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? problemOf("not_found", `nothing has an id that long (at most ${MAX_PATH_PARAM_LENGTH})`)
          : problemOf(
              "malformed_request",
              `the path ${request.url.split("?")[0] ?? ""} is not valid`,
            ),
      );
    },
  });
  const registered: RegisteredRoute[] = [];
  app.decorate("punctualRoutes", registered);
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method !== "HEAD") registered.push({ method, url: route.url });
    }
  });

  // An empty JSON body is no body (POST /pause from curl with a JSON content type); bad JSON is a 400.
  const json = app.getDefaultJsonParser("error", "error");
  // JSON only: any other media type (text/plain, forms) is refused, 415 (docs/security.md).
  app.removeAllContentTypeParsers();
  // docs/security.md#bounded-input: a body nested deeper than the limit is refused before it is parsed.
  const parseBody = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (error: Error | null, value?: unknown) => void,
  ): void => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    try {
      checkJsonTextDepth(text);
    } catch (error) {
      done(error as Error);
      return;
    }
    void json(request, text, done);
  };
  app.addContentTypeParser("application/json", { parseAs: "string" }, parseBody);

  app.setErrorHandler(replyWithProblem);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = methodsServing(registered, path);
    if (allowed.length > 0) {
      return sendProblem(
        reply,
        problemOf(
          "method_not_allowed",
          `${path} takes ${allowed.join(", ")}, not ${request.method}`,
        ),
        { allow: allowed.join(", ") },
      );
    }
    return sendProblem(reply, problemOf("route_not_found", `no route ${request.method} ${path}`));
  });

  // Per client address, before a token is even looked up: an address whose failed attempts used up its
  // allowance waits (429), and the callback routes have a rate of their own.
  const addressRefusal = (request: FastifyRequest): HttpProblem | null => {
    const { auth, callback } = request.routeOptions.config;
    if (addressLimits === null || (auth !== true && callback !== true)) return null;
    const key = addressKey(request.ip);
    const now = Date.now();
    const throttled = addressLimits.failures.waitFor(key, now);
    if (throttled > 0) {
      return new HttpProblem(
        "rate_limited",
        `too many failed attempts from this address; retry in ${throttled} s`,
        { headers: { "retry-after": String(throttled) } },
      );
    }
    const wait = callback === true ? addressLimits.callbacks.take(key, now) : 0;
    if (wait === 0) return null;
    return new HttpProblem("rate_limited", `too many callbacks; retry in ${wait} s`, {
      headers: { "retry-after": String(wait) },
    });
  };
  app.addHook("onRequest", (request, _reply, done) => {
    done(addressRefusal(request) ?? undefined);
  });
  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.config.auth !== true) return;
    const secret = tokenOf(request);
    const proxied = secret === null ? (authProxy?.ownerOf(request) ?? null) : null;
    if (proxied !== null) {
      // The proxy's user is an owner like a token's, never an admin; rate-limited per user.
      throttle(`proxy:${proxied}`);
      actors.set(request, { owner: proxied as OwnerId, admin: false });
      return;
    }
    if (secret === null) {
      throw new HttpProblem("unauthorized", "send Authorization: Bearer <token>");
    }
    const found = await options.tokens.authenticate(secret);
    if (found === null) throw new HttpProblem("unauthorized", "unknown or revoked token");
    throttle(found.token.id);
    actors.set(request, found.actor);
  });
  const throttle = (key: string): void => {
    if (limiter !== null) {
      const wait = limiter.take(key, Date.now());
      if (wait > 0) {
        throw new HttpProblem("rate_limited", `too many requests; retry in ${wait} s`, {
          headers: { "retry-after": String(wait) },
        });
      }
    }
  };
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    const { auth, callback } = request.routeOptions.config;
    const failed =
      (auth === true && reply.statusCode === 401) ||
      (callback === true && reply.statusCode === 404);
    if (failed && addressLimits !== null) {
      addressLimits.failures.take(addressKey(request.ip), Date.now());
    }
    metrics.observeRequest(request.method, route, reply.statusCode);
    const quiet = route === "/healthz" || route === "/readyz" || route === "/metrics";
    // The route and the path only: a query string may carry a callback's token (`?token=`), and a
    // log reader must not be able to post verdicts (docs/security.md#log-readers). No header either.
    const fields = {
      method: request.method,
      route,
      path: request.url.split("?")[0] ?? "",
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (quiet) request.log.debug(fields, "request");
    else request.log.info(fields, "request");
  });

  let document: unknown = null;
  const routes: RouteSpec[] = [];
  const deps = { tasks: options.tasks, idempotency: options.idempotency, now: options.now };
  const groups: RouteSpec[][] = [
    systemRoutes({
      health: options.health,
      isShuttingDown: options.isShuttingDown ?? (() => false),
      metrics,
      openApi: () =>
        (document ??= buildOpenApiDocument(routes, { version: options.version ?? "0.0.0" })),
    }),
    taskRoutes(deps),
    runRoutes(deps),
    scheduleRoutes(deps),
    calendarRoutes(deps),
    dashboardRoutes(),
    ...(options.replicas === undefined
      ? []
      : [replicaRoutes({ ...options.replicas, now: options.now })]),
    ...(options.callbacks === undefined ? [] : [callbackRoutes(options.callbacks)]),
  ];
  const addRoute = (instance: FastifyInstance, spec: RouteSpec): void => {
    const beforeBody = spec.beforeBody;
    instance.route({
      method: spec.method,
      url: spec.url,
      config: { auth: spec.auth, callback: spec.callback === true },
      ...(spec.bodyLimit === undefined ? {} : { bodyLimit: spec.bodyLimit }),
      ...(beforeBody === undefined
        ? {}
        : {
            preParsing: async (request: FastifyRequest, reply: FastifyReply, payload) => {
              try {
                await beforeBody(request);
              } catch (error) {
                // Refused unread: close the connection rather than drain the rest of the body.
                void reply.header("connection", "close");
                throw error;
              }
              return payload;
            },
          }),
      handler: async (request, reply) => {
        const parsed = parseRequest(spec, request);
        const answer = await spec.handler({
          request,
          reply,
          actor: actors.get(request) ?? null,
          params: parsed.params,
          query: parsed.query,
          body: parsed.body,
        });
        return sendAnswer(reply, answer);
      },
    });
  };
  for (const group of groups) {
    routes.push(...group);
    await app.register((instance, _opts, done) => {
      for (const spec of group) {
        if (spec.acceptsTextJson !== true) {
          addRoute(instance, spec);
          continue;
        }
        // Only this route takes JSON sent as text/plain (an agent server's webhook); its neighbours,
        // `/complete` among them, keep to application/json (a cross-site form cannot post to them).
        void instance.register((own, _ownOpts, ownDone) => {
          own.addContentTypeParser("text/plain", { parseAs: "string" }, parseBody);
          addRoute(own, spec);
          ownDone();
        });
      }
      done();
    });
  }
  if (options.deerflow !== undefined) {
    await registerDeerflowRoutes(app, {
      tasks: options.tasks,
      now: options.now,
      target: options.deerflow,
      actorOf: (request) => actors.get(request) ?? null,
    });
  }
  for (const target of options.langGraph ?? []) {
    await registerLangGraphCronRoutes(app, {
      tasks: options.tasks,
      now: options.now,
      target,
      actorOf: (request) => actors.get(request) ?? null,
    });
  }
  for (const server of options.langGraphProxy ?? []) {
    await registerLangGraphProxy(app, {
      server,
      actorOf: (request) => actors.get(request) ?? null,
    });
  }
  return app;
}

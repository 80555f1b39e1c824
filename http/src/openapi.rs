//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of every endpoint. Its schemas
//! are JSON Schema 2020-12 (OpenAPI 3.1's dialect), strict where the answer is ours:
//! a test checks every answer of a running host against them.

use serde_json::{Value, json};

/// The API's version, as the document and the paths say it.
pub const API_VERSION: &str = "1";

fn nullable(kind: &str) -> Value {
    json!({"type": [kind, "null"]})
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

fn id_parameter() -> Value {
    json!({
        "name": "id", "in": "path", "required": true,
        "description": "A task id (64 hex digits) or a unique prefix of one.",
        "schema": {"type": "string", "pattern": "^[0-9a-fA-F]{1,64}$"}
    })
}

/// The document.
pub fn document() -> Value {
    let time = json!({"type": "string", "description": "RFC 3339, UTC, milliseconds"});
    let time_or_null = json!({"type": ["string", "null"]});
    let counts = json!({
        "type": "object",
        "required": ["succeeded", "failed", "interrupted"],
        "properties": {
            "succeeded": {"type": "integer", "minimum": 0},
            "failed": {"type": "integer", "minimum": 0},
            "interrupted": {"type": "integer", "minimum": 0}
        }
    });
    let attempt_properties = json!({
        "attempt": {"type": "integer", "minimum": 1},
        "outcome": {"enum": ["succeeded", "failed", "interrupted", null]},
        "reason": nullable("string"),
        "exit_code": nullable("integer"),
        "error": nullable("string"),
        "workspace": nullable("string"),
        "branch": nullable("string"),
        "log_path": nullable("string"),
        "host_pid": nullable("integer"),
        "agent_pid": nullable("integer"),
        "started_at": time,
        "ended_at": time_or_null,
        "duration_seconds": nullable("number"),
        "provider": nullable("string"),
        "session_id": nullable("string"),
        "resumed": {"type": "boolean"},
        "answer": nullable("string"),
        "usage": {"oneOf": [{"type": "null"}, {
            "type": "object", "additionalProperties": false,
            "required": ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"],
            "properties": {
                "input_tokens": {"type": "integer", "minimum": 0},
                "output_tokens": {"type": "integer", "minimum": 0},
                "cache_read_tokens": {"type": "integer", "minimum": 0},
                "cache_write_tokens": {"type": "integer", "minimum": 0}
            }
        }]},
        "cost_usd": nullable("number"),
        "stream_diagnostics": {"type": "array", "items": {"type": "string"}}
    });
    let attempt_required = json!([
        "attempt",
        "outcome",
        "reason",
        "exit_code",
        "error",
        "workspace",
        "branch",
        "log_path",
        "host_pid",
        "agent_pid",
        "started_at",
        "ended_at",
        "duration_seconds",
        "provider",
        "session_id",
        "resumed",
        "answer",
        "usage",
        "cost_usd",
        "stream_diagnostics"
    ]);
    let values = json!({"type": "array", "items": {
        "type": "object", "required": ["key", "value"],
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}}
    }});
    let mut task_attempt_properties = attempt_properties.clone();
    task_attempt_properties["automation"] = json!({"type": "string"});
    task_attempt_properties["task_id"] = json!({"type": "string"});
    task_attempt_properties["values"] = values.clone();
    let mut task_attempt_required = attempt_required.clone();
    if let Some(required) = task_attempt_required.as_array_mut() {
        required.push(json!("automation"));
        required.push(json!("task_id"));
        required.push(json!("values"));
    }
    let task_properties = json!({
        "automation": {"type": "string"},
        "task_id": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "values": values,
        "status": {"enum": ["running", "succeeded", "failed", "interrupted"]},
        "attempts": {"type": "integer", "minimum": 0},
        "exit_code": nullable("integer"),
        "reason": nullable("string"),
        "workspace": nullable("string"),
        "host_pid": nullable("integer"),
        "agent_pid": nullable("integer"),
        "retry_requested": {"type": "boolean"},
        "created_at": time,
        "updated_at": time,
        "duration_seconds": nullable("number")
    });
    let task_required = json!([
        "automation",
        "task_id",
        "values",
        "status",
        "attempts",
        "exit_code",
        "reason",
        "workspace",
        "host_pid",
        "agent_pid",
        "retry_requested",
        "created_at",
        "updated_at",
        "duration_seconds"
    ]);
    let mut detail_properties = task_properties.clone();
    detail_properties["history"] =
        json!({"type": "array", "items": {"$ref": "#/components/schemas/Attempt"}});
    let mut detail_required = task_required.clone();
    if let Some(required) = detail_required.as_array_mut() {
        required.push(json!("history"));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Curupira host",
            "version": API_VERSION,
            "description": "A running `curupira run --listen`: its state, its tasks and \
                their attempts and logs, and one mutation, a retry. Served on loopback; \
                every request's `Host` must name the server, a POST must be \
                `application/json` and its `Origin`, when sent, this server."
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": {
            "/api/v1/state": {"get": {
                "operationId": "state",
                "summary": "The `curupira status` document of the running host.",
                "responses": {
                    "200": {"description": "The state.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/State"}}}},
                    "500": error_response("The ledger could not be read.")
                }
            }},
            "/api/v1/tasks": {"get": {
                "operationId": "tasks",
                "summary": "The most recently changed tasks first.",
                "parameters": [
                    {"name": "status", "in": "query", "schema": {"enum": ["running", "succeeded", "failed", "interrupted"]}},
                    {"name": "automation", "in": "query", "schema": {"type": "string"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": crate::MAX_TASKS, "default": 50}}
                ],
                "responses": {
                    "200": {"description": "The tasks.", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Task"}}}}},
                    "400": error_response("A parameter is not one of these, or out of range."),
                    "500": error_response("The ledger could not be read.")
                }
            }},
            "/api/v1/tasks/{id}": {"get": {
                "operationId": "task",
                "summary": "One task and the history of its attempts (as `tasks show --format json`).",
                "parameters": [id_parameter()],
                "responses": {
                    "200": {"description": "The task.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TaskDetail"}}}},
                    "400": error_response("The id is not hex, or a prefix several tasks share."),
                    "404": error_response("No task has this id.")
                }
            }},
            "/api/v1/tasks/{id}/log": {"get": {
                "operationId": "log",
                "summary": "An attempt's log: whole lines behind their time and stream (`tasks log`).",
                "parameters": [id_parameter(), {"name": "attempt", "in": "query", "schema": {"type": "integer", "minimum": 1}}],
                "responses": {
                    "200": {"description": "The log (empty when the attempt printed nothing).", "content": {"text/plain": {"schema": {"type": "string"}}}},
                    "400": error_response("The id or the attempt is not valid."),
                    "404": error_response("No such task or attempt.")
                }
            }},
            "/api/v1/tasks/{id}/retry": {"post": {
                "operationId": "retry",
                "summary": "Asks the host to run a finished task again at its automation's next round (`tasks retry`).",
                "parameters": [id_parameter()],
                "requestBody": {"required": false, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {
                    "200": {"description": "Asked.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Retried"}}}},
                    "403": error_response("A wrong `Host`, an `Origin` of another site, or a page served read-only (`curupira status --serve`)."),
                    "404": error_response("No task has this id."),
                    "409": error_response("The task is running."),
                    "413": error_response("The body is too large."),
                    "415": error_response("The body is not `application/json`.")
                }
            }},
            "/api/v1/outcomes": {"get": {
                "operationId": "outcomes",
                "summary": "Tasks finished in each of the last hours, by outcome (the page's chart).",
                "parameters": [{"name": "hours", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 744, "default": 24}}],
                "responses": {
                    "200": {"description": "One entry per hour, the oldest first.", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Hour"}}}}},
                    "400": error_response("`hours` is out of range.")
                }
            }},
            "/api/v1/openapi.json": {"get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}
            }},
            "/metrics": {"get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (OpenMetrics text).",
                "responses": {"200": {"description": "The metrics.", "content": {"application/openmetrics-text": {"schema": {"type": "string"}}}}}
            }},
            "/": {"get": {
                "operationId": "page",
                "summary": "The status page.",
                "responses": {"200": {"description": "HTML.", "content": {"text/html": {"schema": {"type": "string"}}}}}
            }}
        },
        "components": {"schemas": {
            "Error": {
                "type": "object", "required": ["error"], "additionalProperties": false,
                "properties": {"error": {
                    "type": "object", "required": ["code", "message"], "additionalProperties": false,
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}}
                }}
            },
            "Counts": counts,
            "Attempt": {"type": "object", "required": attempt_required, "additionalProperties": false, "properties": attempt_properties},
            "TaskAttempt": {"type": "object", "required": task_attempt_required, "additionalProperties": false, "properties": task_attempt_properties},
            "Task": {"type": "object", "required": task_required, "additionalProperties": false, "properties": task_properties},
            "TaskDetail": {"type": "object", "required": detail_required, "additionalProperties": false, "properties": detail_properties},
            "Retried": {
                "type": "object", "required": ["automation", "task_id", "retry_requested"], "additionalProperties": false,
                "properties": {"automation": {"type": "string"}, "task_id": {"type": "string"}, "retry_requested": {"const": true}}
            },
            "Hour": {
                "type": "object", "required": ["hour", "succeeded", "failed", "interrupted"], "additionalProperties": false,
                "properties": {
                    "hour": {"type": "string", "description": "The hour's start, RFC 3339, UTC"},
                    "succeeded": {"type": "integer", "minimum": 0},
                    "failed": {"type": "integer", "minimum": 0},
                    "interrupted": {"type": "integer", "minimum": 0}
                }
            },
            "State": {
                "type": "object",
                "description": "Version 1 of the `curupira status` document (docs/HOST.md); members may be added within a version.",
                "required": ["version", "generated_at", "state_dir", "host", "running", "retrying", "automations", "left_open", "counts", "task_counts", "last_failures", "ledger"],
                "properties": {
                    "version": {"const": 1},
                    "generated_at": time,
                    "state_dir": {"type": "string"},
                    "host": {
                        "type": "object",
                        "required": ["state", "pid", "started_at", "ended_at", "version", "config", "published_at", "stopping"],
                        "properties": {
                            "state": {"enum": ["running", "gone", "stopped", "none"]},
                            "pid": nullable("integer"),
                            "started_at": time_or_null,
                            "ended_at": time_or_null,
                            "version": nullable("string"),
                            "config": nullable("string"),
                            "published_at": time_or_null,
                            "stopping": {"type": "boolean"}
                        }
                    },
                    "running": {"type": "array", "items": {
                        "type": "object",
                        "required": ["automation", "task_id", "attempt", "started_at", "elapsed_seconds", "pid", "workspace", "branch", "log_path", "values"],
                        "properties": {
                            "automation": {"type": "string"}, "task_id": {"type": "string"},
                            "attempt": {"type": "integer", "minimum": 1}, "started_at": time,
                            "elapsed_seconds": {"type": "number"}, "pid": nullable("integer"),
                            "workspace": nullable("string"), "branch": nullable("string"),
                            "log_path": nullable("string"),
                            "values": values
                        }
                    }},
                    "retrying": {"type": "array", "items": {
                        "type": "object",
                        "required": ["automation", "task_id", "attempt", "due_at", "due_in_seconds", "reason", "error", "exit_code", "values"],
                        "properties": {
                            "automation": {"type": "string"}, "task_id": {"type": "string"},
                            "attempt": {"type": "integer", "minimum": 2}, "due_at": time,
                            "due_in_seconds": {"type": "number", "minimum": 0},
                            "reason": {"type": "string"}, "error": nullable("string"),
                            "exit_code": nullable("integer"),
                            "values": values
                        }
                    }},
                    "automations": {"type": "array", "items": {
                        "type": "object",
                        "required": ["name", "active", "rounds", "round_running", "last_round_started_at", "last_round_ended_at", "next_round_at"],
                        "properties": {
                            "name": {"type": "string"}, "active": {"type": "boolean"},
                            "rounds": {"type": "integer", "minimum": 0},
                            "round_running": {"type": "boolean"},
                            "last_round_started_at": time_or_null,
                            "last_round_ended_at": time_or_null,
                            "next_round_at": time_or_null,
                            "next_tick": time
                        }
                    }},
                    "left_open": {"type": "array", "items": {"$ref": "#/components/schemas/TaskAttempt"}},
                    "counts": {"oneOf": [
                        {"type": "null"},
                        {"type": "object", "required": ["last_hour", "last_day"], "properties": {
                            "last_hour": {"$ref": "#/components/schemas/Counts"},
                            "last_day": {"$ref": "#/components/schemas/Counts"}
                        }}
                    ]},
                    "task_counts": {"oneOf": [
                        {"type": "null"},
                        {"type": "object", "required": ["last_hour", "last_day"], "properties": {
                            "last_hour": {"$ref": "#/components/schemas/Counts"},
                            "last_day": {"$ref": "#/components/schemas/Counts"}
                        }}
                    ]},
                    "last_failures": {"type": "array", "items": {"$ref": "#/components/schemas/TaskAttempt"}},
                    "ledger": nullable("string")
                }
            }
        }}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` points at a schema the document has.
    #[test]
    fn every_reference_resolves() {
        let document = document();
        let text = document.to_string();
        let schemas = document["components"]["schemas"].as_object().unwrap();
        let mut seen = 0;
        for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = part.split('"').next().unwrap();
            assert!(schemas.contains_key(name), "{name}");
            seen += 1;
        }
        assert!(seen > 10);
        assert_eq!(document["openapi"], "3.1.0");
    }
}

#!/bin/sh
# A stand-in coding agent that needs nothing installed: it reads the prompt on
# stdin and says what it received. Replace `command` in curupira.toml with a real
# agent (any program that reads a prompt on stdin) to do real work.
prompt=$(cat)
echo "agent: task $CURUPIRA_TASK_ID of automation $CURUPIRA_AUTOMATION"
printf '%s\n' "$prompt" | sed 's/^/agent: | /'

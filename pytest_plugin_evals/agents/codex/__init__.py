"""``--eval-agent codex``: OpenAI Codex CLI's ``codex exec --json`` — its command line, model
provider and plugin install (:mod:`.agent`) and its JSON event stream (:mod:`.events`)."""

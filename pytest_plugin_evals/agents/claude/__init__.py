"""``--eval-agent claude``: Claude Code's ``claude -p`` — its declaration (``spec.yaml``), its
command line (:mod:`.agent`), its command sandbox (:mod:`.shell`) and its stream-json trace
(:mod:`.stream_json`)."""

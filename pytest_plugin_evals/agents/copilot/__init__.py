"""``--eval-agent copilot``: GitHub Copilot CLI — its command line (:mod:`.agent`), the tools a
run is offered and may use (:mod:`.tools`) and its JSON event trace (:mod:`.events`)."""

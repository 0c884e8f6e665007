"""``--eval-agent gemini``: Gemini CLI's ``gemini -p`` — its command line and run (:mod:`.agent`),
the tools a run may use (:mod:`.tools`), the plugin as a Gemini CLI extension
(:mod:`.extension`) and its stream-json trace (:mod:`.stream_json`)."""

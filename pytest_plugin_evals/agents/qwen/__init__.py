"""``--eval-agent qwen``: Qwen Code's ``qwen -p`` — its declaration (:mod:`.spec`), its command
line, settings and plugin install (:mod:`.agent`) and its stream-json trace (:mod:`.stream`)."""

"""``--eval-agent qwen``: Qwen Code's ``qwen -p`` — its declaration (``spec.yaml``), its command
line, settings and plugin install (:mod:`.agent`) and its stream-json trace (:mod:`.stream`)."""

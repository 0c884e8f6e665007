"""``--eval-agent opencode``: opencode's ``opencode run --format json`` — its command line and
configuration (:mod:`.agent`, :mod:`.config`) and its JSON event stream (:mod:`.events`)."""

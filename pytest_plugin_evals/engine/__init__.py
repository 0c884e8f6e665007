"""The session's rules as data, apart from the pytest shell: the session's one budget (cost
ceiling with reservations, rate-limit pause, run slots: :mod:`.budget`), the channel the
processes of a session reach it over (:mod:`.wire`), and the gates that decide the exit status
(:mod:`.gates`). Imports no pytest and starts no process; the shell calls it and turns what it
returns into skips, lines and the exit status."""

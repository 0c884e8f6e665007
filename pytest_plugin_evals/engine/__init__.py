"""The session's rules as data, apart from the pytest shell: the cost ceiling (:mod:`.budget`)
and the gates that decide the exit status (:mod:`.gates`). Imports no pytest and starts no
process; the shell calls it and turns what it returns into skips, lines and the exit status."""

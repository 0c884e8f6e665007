"""Keeping each run in the results folder: its trace, the files it created and its metadata.

``<results>/runs/<case key>/<arm>-<run>/`` holds ``trace.jsonl``, ``meta.json`` and ``files/``
(:mod:`.layout`); :mod:`.keep` writes it, :mod:`.meta` turns a transcript into ``meta.json``
and back (through the strict shape of :mod:`.shape`), :mod:`.recorded` reads a kept run back
for the replay agent and for reuse, and :mod:`.folders` holds a results folder for one session.
"""

from .folders import CLAIM_LOCK as CLAIM_LOCK
from .folders import CLAIM_WAIT as CLAIM_WAIT
from .folders import OWNER_FILE as OWNER_FILE
from .folders import SESSION_LOCK as SESSION_LOCK
from .folders import FolderBusy as FolderBusy
from .folders import chosen_folders as chosen_folders
from .folders import claim_runs_folder as claim_runs_folder
from .folders import hold_results_folder as hold_results_folder
from .folders import ignore_all as ignore_all
from .folders import release_results_folders as release_results_folders
from .folders import tell_chosen as tell_chosen
from .folders import tell_unselected as tell_unselected
from .folders import unselected as unselected
from .folders import wait_for_claims as wait_for_claims
from .keep import record_run as record_run
from .layout import FILES as FILES
from .layout import MAX_KEPT_FILE as MAX_KEPT_FILE
from .layout import META as META
from .layout import SLUG_LENGTH as SLUG_LENGTH
from .layout import TRACE as TRACE
from .layout import case_key as case_key
from .layout import run_folder as run_folder
from .layout import short_hash as short_hash
from .layout import slug as slug
from .layout import unique_slug as unique_slug
from .meta import MetaError as MetaError
from .meta import check_meta as check_meta
from .meta import transcript_from_meta as transcript_from_meta
from .meta import transcript_meta as transcript_meta
from .recorded import MAX_META as MAX_META
from .recorded import RecordedRun as RecordedRun
from .recorded import RecordedRunRefused as RecordedRunRefused
from .recorded import read_recorded_run as read_recorded_run
from .recorded import restore_recorded_run as restore_recorded_run

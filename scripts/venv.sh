# Sourced by demo.sh and test.sh (from the checkout root): `ensure_venv EXTRAS [ALSO_OK...]`
# creates .venv once and runs `pip install -e ".[EXTRAS]"` only when pyproject.toml
# changed since the last install of those extras (or of an ALSO_OK superset), so a run
# with an up-to-date .venv starts at once. The source itself needs no reinstall
# (editable install). ACP2_VENV_VERBOSE=1 says which way it went, on stderr.
ensure_venv() {
  local extras=$1 py=${PYTHON:-python3} want name
  shift
  want=$(cksum < pyproject.toml)
  for name in "$extras" "$@"; do
    if [ -x .venv/bin/python ] && [ "$(cat ".venv/.acp2-installed-$name" 2>/dev/null)" = "$want" ]; then
      [ -z "${ACP2_VENV_VERBOSE:-}" ] || echo "venv: up to date ($name)" >&2
      return 0
    fi
  done
  [ -z "${ACP2_VENV_VERBOSE:-}" ] || echo "venv: installing .[$extras]" >&2
  if [ ! -x .venv/bin/python ]; then
    "$py" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
  echo "$want" > ".venv/.acp2-installed-$extras"
}

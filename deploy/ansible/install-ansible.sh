#!/bin/sh
# Install ansible-core from PyPI into a virtual environment and print the
# path of its ansible-playbook. Used by tests/deploy_ansible.rs and .ci/run;
# a user with Ansible already installed does not need it.
#   CPUSCOPE_ANSIBLE_VENV   where (default: ${XDG_CACHE_HOME:-~/.cache}/cpuscope/ansible)
#   ANSIBLE_CORE_SPEC       what to install (default: ansible-core>=2.15,<2.19)
set -eu
venv=${CPUSCOPE_ANSIBLE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cpuscope/ansible}
spec=${ANSIBLE_CORE_SPEC:-ansible-core>=2.15,<2.19}
if [ ! -x "$venv/bin/ansible-playbook" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$spec" >&2
fi
"$venv/bin/ansible-playbook" --version >&2
echo "$venv/bin/ansible-playbook"

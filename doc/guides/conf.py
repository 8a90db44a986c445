# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of hpmalloc's guides.

Build: meson compile -C BUILD doc (meson option docs), or by hand:
    /usr/bin/sphinx-build -W -b html doc/guides OUTDIR
The API reference (api.rst) is the public headers' doxygen, run here at the
start of every build (XML into $HPM_DOXYGEN_XML, else beside the doctrees)
and rendered by Breathe. Doxygen's warnings fail the build as Sphinx's do.
Debian 12: python3-sphinx python3-breathe doxygen (python3-sphinx-rtd-theme
for DPDK's look); run Sphinx with Debian's /usr/bin/python3.
"""

import logging
import os
import re
import subprocess

from sphinx.errors import ConfigError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADERS = ["hpm_malloc.h", "hpm_inline.h", "hpm_mempool.h", "hpm_rte.h"]


def project_version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        m = re.search(r"version:\s*'([^']+)'", f.read())
    return m.group(1) if m else "unknown"


project = "hpmalloc"
copyright = "the hpmalloc authors, BSD-3-Clause"
version = release = project_version()
master_doc = "index"
exclude_patterns = ["_build"]
numfig = True
highlight_language = "none"
# command-line options keep their "--", quotes stay straight
smartquotes = False
primary_domain = "c"

extensions = ["breathe"]
breathe_projects = {"hpmalloc": ""}  # set by run_doxygen()
breathe_default_project = "hpmalloc"
breathe_domain_by_extension = {"h": "c"}
breathe_show_define_initializer = True
breathe_show_enumvalue_initializer = True

try:
    import sphinx_rtd_theme  # noqa: F401
    html_theme = "sphinx_rtd_theme"
except ImportError:
    html_theme = "alabaster"
html_title = "hpmalloc %s" % release
html_show_sourcelink = False

# What doxygen is told: the public headers, XML only, every warning an error.
# WARN_NO_PARAMDOC stays off: doxygen 1.9.4 (Debian 12) gives it for every
# declaration, documented or not; WARN_IF_DOC_ERROR still reports a misnamed
# parameter, and one left out where the others are documented. The filter
# escapes "<socket>"-style placeholders that doxygen would take for HTML tags,
# and the "--" of command-line options, which it would print as a dash.
DOXYFILE = r"""
PROJECT_NAME = hpmalloc
INPUT = {inputs}
OUTPUT_DIRECTORY = {out}
STRIP_FROM_PATH = {root}/include
GENERATE_XML = YES
GENERATE_HTML = NO
GENERATE_LATEX = NO
XML_PROGRAMLISTING = NO
OPTIMIZE_OUTPUT_FOR_C = YES
EXTRACT_ALL = NO
EXTRACT_STATIC = NO
CASE_SENSE_NAMES = YES
QUIET = YES
WARNINGS = YES
WARN_IF_UNDOCUMENTED = YES
WARN_IF_DOC_ERROR = YES
WARN_NO_PARAMDOC = NO
WARN_AS_ERROR = FAIL_ON_WARNINGS
ENABLE_PREPROCESSING = YES
MACRO_EXPANSION = YES
EXPAND_ONLY_PREDEF = YES
PREDEFINED = __hpm_malloc= __hpm_dealloc_free= __hpm_wur= \
    "__hpm_alloc_size(...)=" "__hpm_alloc_align(n)=" __rte_always_inline= __thread= \
    "__attribute__(x)="
INPUT_FILTER = "sed -e 's/,<\([a-z_]*\)>/,\&lt;\1\&gt;/g' -e 's/\([ (,]\)--/\1\\--/g'"
"""


def run_doxygen(app):
    out = os.environ.get("HPM_DOXYGEN_XML") or os.path.join(app.doctreedir, "doxygen")
    os.makedirs(out, exist_ok=True)
    inputs = " ".join(os.path.join(ROOT, "include", h) for h in HEADERS)
    conf = DOXYFILE.format(inputs=inputs, out=out, root=ROOT)
    try:
        r = subprocess.run(["doxygen", "-"], input=conf, text=True, capture_output=True)
    except FileNotFoundError:
        raise ConfigError("doxygen not found: apt-get install -y doxygen")
    if r.returncode != 0 or r.stderr.strip():
        raise ConfigError("doxygen failed on the public headers:\n" + r.stderr)
    app.config.breathe_projects = {"hpmalloc": os.path.join(out, "xml")}


# A struct and a function of the same name are two things in C, one in
# Sphinx's C domain, which calls the second a duplicate. These pairs are the
# API's (struct hpm_cache_stats and hpm_cache_stats(), the same for
# hpm_rte_stats): that warning, for them alone, is not an error.
C_TAG_TWINS = ("hpm_cache_stats", "hpm_rte_stats")


class TagTwinFilter(logging.Filter):
    def filter(self, record):
        msg = record.getMessage()
        return not (msg.startswith("Duplicate C declaration") and
                    any(re.search(r"\.\. c:\w+:: .*\b%s\b" % n, msg) for n in C_TAG_TWINS))


def setup(app):
    logging.getLogger("sphinx.sphinx.domains.c").addFilter(TagTwinFilter())
    app.connect("builder-inited", run_doxygen)

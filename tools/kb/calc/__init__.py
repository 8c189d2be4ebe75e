"""Calculators in the articles: the formulas (``kb.calc.formulas``, ported to
``_static/kb-calc/formulas.js``), the GPU spec data (``kb.calc.gpus``) and the
``{calculator}`` / ``{gpu-spec-table}`` directives (``kb.calc.directive``)."""

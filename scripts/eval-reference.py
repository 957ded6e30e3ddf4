#!/usr/bin/env python3
"""Regenerates tests/fixtures/eval/rouge_table.json, the reference data of `adk-flow eval`'s
response_match_score port, with the real Python packages ADK uses for it.

    python3 -m venv /tmp/evalref && /tmp/evalref/bin/pip install nltk rouge-score
    /tmp/evalref/bin/python scripts/eval-reference.py

The table holds: words and their stems from NLTK's PorterStemmer (NLTK_EXTENSIONS, the
mode rouge-score uses), texts and rouge-score's tokens, (reference, candidate) pairs with
ROUGE-1 precision, recall and F-measure from RougeScorer(["rouge1"], use_stemmer=True),
and pairs of JSON values with Python's `==` on them (the trajectory metric's equality).
Every input is generated here from fixed lists and a seeded generator, so the output only
changes when the packages' behaviour does.
"""

import itertools
import json
import os
import random
import sys

import nltk
import rouge_score
from nltk.stem import porter
from rouge_score import rouge_scorer, tokenize

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "eval", "rouge_table.json"
)

# Real words chosen for the rules they exercise (irregular forms, y handling, double
# consonants, every step-2/3/4 suffix), plus common words.
WORDS = """
caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled
sized hopping tanned falling hissing fizzed failing filing happy sky skies dying lying tying
news innings inning outings outing cannings canning howe proceed exceed succeed relational
conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli
analogousli vietnamization predication operator feudalism decisiveness hopefulness
callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti
electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable
defensible irritant replacement adjustment dependent adoption homologou communism activate
angulariti homologous effective bowdlerize probate rate cease controll roll generalizations
oscillators abilities agreement agreements argument arguments apology apologies analogy
biology theology geology yelling yellow yesterday syzygy toy toys enjoy enjoyed enjoying
boy boys buy buying crying cried flies flying dries dried ies died lies tied spied
fully hopefully beautifully generally finally really totally usually actually
weather whether forecast forecasting temperature temperatures sunny cloudy rainy windy
order orders ordered ordering paid paying payment payments invoice invoices refund refunded
refunding customer customers support supported supporting application applications crashes
crashed crashing account accounts password passwords reset resetting resets login logging
the a an and or but if then else when while because although however therefore thus hence
agent agents tool tools calling called calls function functions response responses
evaluation evaluations evaluate evaluated evaluating evaluator evaluators metric metrics
running runner runs ran run organization organizational organizations organize organized
international internationalization nationalism nationality nationalities national nations
happiness happily happier happiest unhappy unhappiness conditionally conditioning
sensational sensationalism hesitancy urgency agency agencies emergency emergencies
reliable reliability reliably rely relies relied relying possible possibility possibilities
sky-high e-mail emails ok okay yes no maybe
dogs sheep geese mice feet teeth children oxen
""".split()

# Stems and suffixes combined to reach every rule with measures 0, 1, 2 and 3.
STEMS = """
b tr tre y by oat ivy troubl privat orrer generaliz hop fil fail tan fizz hiss fall
cr sp m r relat condit valen digit conform radic differ vil analog predic oper feud
decis hope callous formal sensit sensib tripl electr good reviv allow infer airlin gyroscop
adjust defens irrit replac depend adopt homolog commun activ angular effect bowdler prob
contr gen agr argu apolog biol theol syz happ yell s ss xy ay oy uy eey bly ply
""".split()
SUFFIXES = """
s ss sses ies ied ed eed ing ly y iy ational tional enci anci izer bli abli alli entli eli
ousli ization ation ator alism iveness fulness ousness aliti iviti biliti fulli logi
icate ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent
sion tion ou ism ate iti ous ive ize e ll at bl iz atly edly ingly ies's
""".split()


def generated_words():
    words = []
    for stem, suffix in itertools.product(STEMS, SUFFIXES):
        words.append(stem + suffix)
    rng = random.Random(19)
    alphabet = "aeiouybcdlmnrstyyyz"
    for _ in range(3000):
        n = rng.randint(1, 12)
        words.append("".join(rng.choice(alphabet) for _ in range(n)))
    for n in range(1, 9):
        words.append("y" * n)
        words.append("ay" * n)
        words.append("y" * n + "ing")
        words.append("y" * n + "ies")
    return words


TEXTS = [
    "",
    "   ",
    "Hello, World!",
    "The weather in Paris is sunny, 25 degrees.",
    "It's 25°C in Paris; sunny!!",
    "Grüße aus München",
    "日本語のテキスト",
    "東京の天気は晴れです。",
    "Straße STRASSE strasse",
    "\u0130stanbul \u212aelvin",
    "e-mail: test@example.com, phone +1 (555) 010-9999",
    "Order #42 was PAID on 2024-05-01.",
    "The agents' evaluations were running; evaluators evaluated everything.",
    "tab\tseparated\nnew line\r\nwindows",
    "ÀÉÎÕÜ àéîõü ÿ ß ø å æ",
    "x y z xy yz a1b2 3rd 1st",
    "happiness happily happier happiest unhappiness",
    "I cannot find order 17; please check the number.",
]

PAIRS = [
    ("The weather in Paris is sunny.", "The weather in Paris is sunny."),
    ("The weather in Paris is sunny.", "It is sunny in Paris."),
    ("Your order 42 has been paid.", "Order 42 was paid on Monday."),
    ("", ""),
    ("", "Something"),
    ("Something", ""),
    ("東京の天気は晴れです。", "東京の天気は晴れです。"),
    ("Grüße aus München", "Grüße aus München"),
    ("the the the cat", "the cat cat"),
    ("Running runners ran quickly", "the runner runs quick"),
    ("I have rolled a 17 sided die twice. The first roll was 13 and the second roll was 4.",
     "I rolled the 17-sided die twice: 13 and 4."),
    ("Refund issued for invoice INV-7.", "I have issued a refund for invoice inv 7"),
    ("a b c d e f g", "g f e d c b a"),
    ("one", "two"),
    ("Evaluations evaluate evaluated evaluators.", "evaluation"),
    ("The app crashes on start. Please reinstall it.", "Reinstall the app; it crashed at start."),
]


def equality_cases():
    values = [
        0, 1, 3, 3.0, 3.5, -0.0, 0.0, "3", "", True, False, None, [], {}, [1, 2], [2, 1],
        [1.0, 2.0], {"a": 1}, {"a": 1.0}, {"a": "1"}, {"a": 1, "b": 2}, {"b": 2, "a": 1},
        {"a": True}, {"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}, 9007199254740993,
        9007199254740992.0, 1e2, 100, "a", "A", [None], {"a": None}, {"a": {}},
    ]
    out = []
    for a, b in itertools.product(values, values):
        out.append([a, b, a == b])
    return out


def main():
    stemmer = porter.PorterStemmer()
    if stemmer.mode != porter.PorterStemmer.NLTK_EXTENSIONS:
        sys.exit("unexpected stemmer mode")
    seen = set()
    stems = []
    for word in WORDS + generated_words():
        w = word.lower()
        if w in seen:
            continue
        seen.add(w)
        stems.append([w, stemmer.stem(w)])
    tokens = [[t, tokenize.tokenize(t, stemmer)] for t in TEXTS + [p for pair in PAIRS for p in pair]]
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    scores = []
    for reference, candidate in PAIRS + [(TEXTS[i], TEXTS[j]) for i in range(len(TEXTS)) for j in range(len(TEXTS))]:
        s = scorer.score(reference, candidate)["rouge1"]
        scores.append([reference, candidate, s.precision, s.recall, s.fmeasure])
    table = {
        "generated_by": "scripts/eval-reference.py",
        "nltk": nltk.__version__,
        "rouge_score": getattr(rouge_score, "__version__", "0.1.2"),
        "stems": stems,
        "tokens": tokens,
        "rouge1": scores,
        "python_equality": equality_cases(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        # One entry per line: diffs stay readable when a package changes behaviour.
        f.write("{\n")
        keys = list(table)
        for k, key in enumerate(keys):
            value = table[key]
            f.write(json.dumps(key) + ": ")
            if isinstance(value, list):
                f.write("[\n")
                f.write(",\n".join(json.dumps(v, ensure_ascii=False) for v in value))
                f.write("\n]")
            else:
                f.write(json.dumps(value))
            f.write(",\n" if k + 1 < len(keys) else "\n")
        f.write("}\n")
    print(f"{OUT}: {len(stems)} stems, {len(tokens)} tokenizations, {len(scores)} scores")


if __name__ == "__main__":
    main()

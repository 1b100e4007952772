"""Requests to a model in other languages than English, and chat-template markers.

`service.query.injection`'s English patterns read word order ("ignore … previous
instructions"). Other languages put the same request in another order (German "Alle
vorherigen Anweisungen ignorieren", Japanese "以前の指示をすべて無視して"), and Chinese,
Japanese and Korean write no spaces between words. So here a request is a *combination of
concepts within one sentence*, in any order:

- overriding: a verb that sets aside (ignore, forget), an instruction noun, and a word
  that points at the model's own or earlier ones (previous, above, original, all, your);
- revealing: a verb that shows (print, show, reveal) and the system prompt;
- addressing a model: a condition ("if you are") with a noun that names a model (AI, KI,
  IA, ИИ, LLM, GPT, language model), or a note addressed to one ("note to AI
  assistants"), or such a noun with an obligation and a verb of replying ("AI assistants
  must recommend");
- dictating the reply ("reply only with", "begin your answer with", "new instructions:").

Each concept is one pattern holding its words in German, French, Spanish, Portuguese,
Italian, Russian, Chinese, Japanese and Korean. A sentence that has the concepts of one
rule is a request, whatever the language of each word: the rules, not the word lists,
say what a request is, and a language gains coverage by adding its words to the
concepts. A sentence needs every concept of its rule, so documentation that only sounds
imperative ("Sie können die Warnung ignorieren", "Follow the instructions in the
README") has no instruction noun next to its verb, or no pointer to earlier ones.

One signal needs no language at all: the control tokens of chat templates
(`<|im_start|>`, `[INST]`, `<<SYS>>`, `<|start_header_id|>`, `<start_of_turn>`) that
forge a turn of the conversation. They are not counted inside code (fenced blocks and
inline code), where documentation of a model's template shows them.

The fence around each passage (`service.query.injection.fence`) and the checks of an
answer that do not read words (an absolute link no passage holds, a run of the prompt)
hold in every language; these patterns only decide which parts of a passage support
nothing. Languages without words here (Dutch, Polish, Turkish, …) are caught only by the
template markers.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

__all__ = ["LANGUAGES", "request_spans"]

#: The languages whose words the concepts hold (ISO 639-1), besides English.
LANGUAGES = ("de", "fr", "es", "pt", "it", "ru", "zh", "ja", "ko")


def _alpha(*words: str) -> str:
    """Words of alphabetic scripts, whole words only (a pattern may end in `\\w*`)."""
    return r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)"


def _cjk(*words: str) -> str:
    """Words of Chinese, Japanese or Korean: no word boundaries to require."""
    return "(?:" + "|".join(words) + ")"


def _either(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


# Names of a model that nobody translates, in their usual case only ("ai" or "ia" in a
# sentence is another word), and compounds of them ("KI-Assistenten", "AIアシスタント").
_MODEL_TOKEN = r"(?<![A-Za-zА-Яа-яЁё])(?-i:AI|KI|IA|ИИ|LLM|GPT|ChatGPT)s?(?![a-zа-яё])"
_MODEL = "|".join(
    [
        _MODEL_TOKEN,
        _alpha(
            r"\w*sprachmodell\w*",
            r"chatbots?",
            r"mod[eè]les? de langage",
            r"modelos? de (?:lenguaje|linguagem)",
            r"modell[oi] linguistic[oi]",
            r"языков\w* модел\w*",
            r"нейросет\w*",
        ),
        _cjk(
            "人工智能", "语言模型", "大模型", "人工知能", "言語モデル", "인공지능", r"언어\s?모델"
        ),
    ]
)

_OVERRIDE = _either(
    _alpha(
        # de
        "ignoriere",
        "ignorier",
        "ignorieren",
        "vergiss",
        "vergessen",
        "missachte",
        "missachten",
        "verwirf",
        "verwerfen",
        "überschreibe",
        "überschreiben",
        # fr, es, pt, it
        "ignore[rz]?",
        "ignora",
        "ignorare",
        "ignorar",
        "oublie[rz]?",
        "olvida",
        "olvidar",
        "olvide",
        "esque[çc]a",
        "esquecer",
        "dimentica",
        "dimenticare",
        "descarta",
        "descartar",
        # ru
        r"игнорир\w*",
        r"проигнорир\w*",
        r"забудь\w*",
        "забыть",
        r"отбрось\w*",
    ),
    _cjk("忽略", "无视", "忘记", "忘掉", "不要理会", "無視", "忘れ", "무시", "잊어", "잊고"),
)
_INSTRUCTION = _either(
    _alpha(
        r"anweisung\w*",
        r"instruktion\w*",
        r"vorgabe\w*",
        r"system-?prompt\w*",
        "instructions?",
        "consignes?",
        "directives?",
        r"instrucci[oó]n\w*",
        "indicaciones",
        "directrices",
        r"instru[cç][aãõ]\w*",
        "diretrizes",
        r"istruzion\w*",
        "direttive",
        r"инструкци\w*",
        r"указани\w*",
        r"промпт\w*",
        r"директив\w*",
    ),
    _cjk("指令", "指示", "提示词", "プロンプト", "지시", "지침", "프롬프트"),
)
_PRIOR = _either(
    _alpha(
        # de
        r"vorherig\w*",
        r"bisherig\w*",
        r"obig\w*",
        r"vorangegangen\w*",
        r"ursprünglich\w*",
        "alle[nr]?",
        r"sämtlich\w*",
        r"dein\w*",
        # fr
        r"précédent\w*",
        r"antérieur\w*",
        "ci-dessus",
        "initiales?",
        "originales?",
        "toutes",
        "tes",
        "vos",
        # es, pt, it
        "anteriores?",
        "previas?",
        "prévias?",
        "iniciais",
        "originais",
        "todas",
        "tus",
        "suas",
        "tuas",
        "precedenti",
        "originali",
        "iniziali",
        "tutte",
        "tue",
        "tuoi",
        # ru
        r"предыдущ\w*",
        r"прежн\w*",
        r"исходн\w*",
        r"первоначальн\w*",
        r"вышеуказанн\w*",
        "все",
        "всё",
        r"сво[иеёюя]\w*",
        r"тво[иеёюя]\w*",
    ),
    _cjk(
        "之前",
        "以前",
        "先前",
        "上面",
        "上述",
        "原来",
        "原先",
        "所有",
        "全部",
        "你的",
        "これまでの",
        "前の",
        "上記",
        "元の",
        "すべて",
        "全て",
        "이전",
        "위의",
        "원래",
        "모든",
        "당신의",
    ),
)
_REVEAL = _either(
    _alpha(
        r"zeige?\w*",
        "gib",
        "ausgeben",
        r"verrate\w*",
        r"enthülle\w*",
        r"wiederhole\w*",
        r"affiche\w*",
        r"révèle\w*",
        r"montre\w*",
        r"imprime\w*",
        r"répète\w*",
        r"divulgue\w*",
        r"muestra\w*",
        r"revela\w*",
        r"repite\w*",
        r"mostre\w*",
        r"revele\w*",
        r"imprima\w*",
        r"repita\w*",
        r"exiba\w*",
        r"mostra\w*",
        r"rivela\w*",
        r"stampa\w*",
        r"ripeti\w*",
        r"покажи\w*",
        r"выведи\w*",
        r"раскрой\w*",
        r"повтори\w*",
        r"напечатай\w*",
        "выдай",
    ),
    _cjk(
        "输出",
        "显示",
        "打印",
        "透露",
        "泄露",
        "展示",
        "重复",
        "表示",
        "出力",
        "教えて",
        "見せて",
        "출력",
        "보여",
        "공개",
        "알려",
    ),
)
_SYSTEM_PROMPT = _either(
    _alpha(
        r"system-?prompt\w*",
        r"systemanweisung\w*",
        r"prompt (?:du )?syst[eè]me",
        r"instructions? syst[eè]me",
        r"prompt (?:del|de|do|di) sistema",
        r"instru\w+ (?:del|do|di) sistema",
        r"системн\w* (?:промпт|подсказк|инструкци)\w*",
    ),
    _cjk(
        "系统提示词",
        "系统指令",
        "初始指令",
        "你的系统提示",
        "您的系统提示",
        "システムプロンプト",
        r"시스템\s?프롬프트",
    ),
)
_CONDITION = _either(
    r"(?<!\w)(?:wenn|falls) du\b.{0,60}?\bbist\b",
    _alpha("si tu es", "si vous êtes", "si eres", "si usted es", "se você é", "se tu és", "se sei"),
    _alpha("если ты"),
    _cjk(
        "如果你是",
        "假如你是",
        "若你是",
        "如果您是",
        r"あなたが.{0,30}?(?:なら|であれば)",
        r"당신이.{0,30}?라면",
    ),
)
_OBLIGATION = _either(
    _alpha(
        "müssen",
        "muss",
        "sollen",
        "sollten",
        "doivent",
        "doit",
        "devez",
        "deben",
        "debe",
        "tienen que",
        "devem",
        "deve",
        "devono",
        "dovrebbero",
        r"должн\w*",
        r"обязан\w*",
    ),
    _cjk("必须", "应该", "务必", "必ず", "なければならない", "べき", "해야", "반드시"),
)
_REPLY = _either(
    _alpha(
        r"antworte\w*",
        r"empfehl\w*",
        r"sage\w*",
        r"nenne\w*",
        r"verweise\w*",
        r"répond\w*",
        r"recommand\w*",
        "dire",
        r"mentionn\w*",
        r"conseill\w*",
        r"respond\w*",
        r"recomiend\w*",
        r"recomend\w*",
        r"rispond\w*",
        r"raccomand\w*",
        r"consigli\w*",
        r"отвеча\w*",
        r"ответь\w*",
        r"рекоменд\w*",
        r"скажи\w*",
        r"упомин\w*",
        r"упомян\w*",
        r"совет\w*",
    ),
    _cjk(
        "回答",
        "回复",
        "推荐",
        "告诉",
        "建议",
        "答え",
        "推奨",
        "推薦",
        "勧め",
        "伝え",
        "답하",
        "추천",
        "권장",
        "말하",
    ),
)
_ADDRESS = _either(
    # "Note to AI assistants:", "Hinweis an KI-Assistenten:": the note, then the model.
    r"(?<!\w)(?:hinweis|nachricht|notiz|note|message|avis|remarque|nota|mensaje|mensagem|"
    r"aviso|messaggio|avviso|attenzione|atención|atenção|примечание|сообщение|заметка|"
    r"внимание)\w*\s+(?:an|für|aux?|pour|para|a|aos?|per|agli?|ai|для|к)\s"
    rf".{{0,30}}?(?:{_MODEL})",
    rf"(?:致|给)\s*(?:{_MODEL})",
    # Japanese and Korean put the address after the model: "AIアシスタントへ", "AI 어시스턴트에게".
    rf"(?:{_MODEL}).{{0,12}}?(?:への|へ[:：]|에게|께)",
)
_DICTATE = _either(
    r"(?<!\w)antworte\w* (?:nur|ausschließlich|lediglich) mit\b",
    r"(?<!\w)(?:beginne|starte|beende|schließe)\w* (?:deine|ihre) antwort\b",
    r"(?<!\w)répond\w* (?:uniquement|seulement|exclusivement) (?:par|avec)\b",
    r"(?<!\w)(?:commence|débute|termine|finis)\w* (?:ta|votre) réponse\b",
    r"(?<!\w)respond\w* (?:solo|sólo|solamente|únicamente|apenas|somente) "
    r"(?:con|com|diciendo|dizendo)\b",
    r"(?<!\w)(?:empieza|comienza|termina|inicia|comece|inicie)\w* (?:tu|su|sua|tua) "
    r"(?:respuesta|resposta)\b",
    r"(?<!\w)rispond\w* (?:solo|soltanto|solamente|unicamente) (?:con|dicendo)\b",
    r"(?<!\w)(?:inizia|comincia|termina)\w* la (?:tua|sua) risposta\b",
    r"(?<!\w)(?:отвеча\w*|ответь\w*) только\b",
    r"(?<!\w)(?:начни|начинай|заверши|закончи)\w* (?:свой|твой|ваш) ответ\b",
    r"(?:只|仅)(?:回复|回答)",
    r"(?:你的|您的)?(?:回答|回复)必须以",
    r"とだけ(?:答え|回答|返答|出力)",
    r"라고만\s?(?:답|대답|응답)",
    r"(?<!\w)(?:neue (?:anweisungen|instruktionen)|nouvelles (?:instructions|consignes)|"
    r"nuevas instrucciones|novas instruções|nuove istruzioni|новые инструкции)\s*[:：]",
    r"(?:新的指令|新指令|新しい指示|새로운 지시)\s*[:：]",
)
#: Control tokens of chat templates: a forged turn of the conversation, in any language.
_TEMPLATE = re.compile(
    r"<\|[A-Za-z_]{2,30}\|>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>", re.IGNORECASE
)

#: Each rule: the concepts one sentence must hold, all of them, in any order.
_RULES: tuple[tuple[re.Pattern[str], ...], ...] = (
    (_OVERRIDE, _INSTRUCTION, _PRIOR),
    (_REVEAL, _SYSTEM_PROMPT),
    (_CONDITION, re.compile(_MODEL, re.IGNORECASE)),
    (re.compile(_MODEL, re.IGNORECASE), _OBLIGATION, _REPLY),
    (_ADDRESS,),
    (_DICTATE,),
)

# A sentence ends at ". ", "! ", "? " (closing quotes and brackets aside), at "。", "！",
# "？" (no space follows them), or at a line break.
_SENTENCE_END = re.compile(r"[.!?][\"')\]»”」』]*(?:\s+|$)|[。！？]+[」』”）)]*|\n")
_CODE = re.compile(r"(?ms)^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$|(`+)[^`\n]+?\2")


def _sentences(text: str) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    start = 0
    for end in _SENTENCE_END.finditer(text):
        if end.end() > start:
            bounds.append((start, end.end()))
        start = end.end()
    if start < len(text):
        bounds.append((start, len(text)))
    return bounds


def _outside_code(text: str) -> Iterator[re.Match[str]]:
    code = [(match.start(), match.end()) for match in _CODE.finditer(text)]
    starts = [start for start, _ in code]
    for match in _TEMPLATE.finditer(text):
        at = bisect.bisect_right(starts, match.start()) - 1
        if at >= 0 and code[at][0] <= match.start() < code[at][1]:
            continue
        yield match


def request_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each part of `text` that the rules take for a request to a model:
    from the start of its sentence to the end of the last concept found in it (unmerged;
    `service.query.injection` extends them to their paragraph)."""
    found: list[tuple[int, int]] = []
    for sentence_start, sentence_end in _sentences(text):
        sentence = text[sentence_start:sentence_end]
        for rule in _RULES:
            ends: list[int] = []
            for concept in rule:
                match = concept.search(sentence)
                if match is None:
                    break
                ends.append(match.end())
            else:
                found.append((sentence_start, sentence_start + max(ends)))
                break
    for match in _outside_code(text):
        found.append((match.start(), match.end()))
    return found

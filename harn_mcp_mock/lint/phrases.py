"""The instructions a poisoned tool surface or an injected result gives, in thirteen languages:
English, Chinese (simplified and traditional), Spanish, Hindi, Arabic, Portuguese, Russian,
Japanese, French, German, Korean, Italian and Turkish.

Each rule has patterns per language, written in ordinary spelling and lower case; they are put
through :func:`~harn_mcp_mock.lint.text.skeleton_pattern` and matched against the skeleton of
the text (accents and vowel marks dropped, look-alikes folded), so ``ignorá``, ``ignora`` and
``ignora`` spelt with a Cyrillic ``i`` read the same. A pattern pairs the act with what it acts on
(ignore + instructions, send + a destination, tell + the user), in either order, so that
ordinary documentation does not match: that is what keeps the real servers' surfaces clean.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from harn_mcp_mock.lint.text import skeleton_pattern

__all__ = ["LANGUAGES", "PHRASES", "match"]

LANGUAGES = {
    "en": "English", "zh": "Chinese", "es": "Spanish", "hi": "Hindi", "ar": "Arabic",
    "pt": "Portuguese", "ru": "Russian", "ja": "Japanese", "fr": "French", "de": "German",
    "ko": "Korean", "it": "Italian", "tr": "Turkish",
}  # fmt: skip

# Where credentials and private keys live: named anywhere in an order, these are the target.
SENSITIVE_PATHS = (
    r"~/\.ssh|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|/etc/(?:passwd|shadow|sudoers)"
    r"|\.netrc\b|\.pgpass\b|\.git-credentials|\.docker/config\.json|\.kube/config|\.npmrc\b|\.pypirc\b"
    r"|wallet\.dat|\.gnupg"
)
_CREDENTIALS = (
    r"(?:private[ _-]?keys?|ssh[ _-]?keys?|api[ _-]?keys?|access[ _-]?tokens?|secret[ _-]?keys?|credentials?"
    r"|passwords?|auth(?:entication)?[ _-]?tokens?|session[ _-]?cookies?|seed phrase|"
    r"token de acceso|token de acesso|jetons? d'accès|zugriffstoken\w*|zugangstoken\w*|token di accesso"
    r"|erişim (?:belirteci|anahtarı)\w*|(?:user'?s|their|his|her) (?:session )?cookies?"
    r"|(?:用户|使用者|ユーザー|사용자)\S{0,2} ?(?:cookie|クッキー|쿠키)|ملفات تعريف الارتباط|куки"
    r"|contraseñas?|credenciales|claves? (?:de )?api|clave privada|senhas?|credenciais|chaves? (?:de )?api|chave privada"
    r"|mots? de passe|identifiants|clés? (?:d')?api|clé privée|passw(?:o|ö)rt(?:er)?|zugangsdaten|anmeldedaten"
    r"|api-schlüssel\w*|privater? schlüssel\w*|credenziali|chiavi? (?:api|privata)|parole d'ordine"
    r"|пароль|пароли|учетные данные|учётные данные|ключ\w* api|api[- ]ключ\w*|закрыт\w* ключ\w*|токен\w*"
    r"|密码|密碼|凭据|凭证|憑證|私钥|私鑰|令牌|密钥|密鑰"
    r"|パスワード|認証情報|秘密鍵|トークン|api ?キー"
    r"|비밀번호|암호|자격 증명|개인 키|토큰|api 키"
    r"|पासवर्ड|क्रेडेंशियल|निजी कुंजी|(?:एपीआई|api) कुंजी|टोकन"
    r"|كلمة المرور|كلمات المرور|بيانات الاعتماد|المفتاح الخاص|مفتاح api|الرمز المميز"
    r"|şifre\w*|parola\w*|kimlik bilgi\w*|özel anahtar\w*|api anahtar\w*)"
)
_DESTINATION = r"(?:https?://|\bwebhook|\bftp://|[\w.+-]+@[\w-]+\.[a-z]{2,}|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bngrok\b|\bpastebin\b)"
_SEND_EN = r"(?:\b(?:send|post|upload|forward|transmit|exfiltrate)(?:s|es|ed|ing)?\b|\be-?mail (?:it|them|the|this|a copy|all|everything)\b)"
_DATA_EN = (
    r"\b(?:data|contents?|files?|conversation|chat|history|results?|output|messages?|keys?|tokens?|credentials|"
    r"passwords?|everything|it|them|a copy|body|logs?|information|details|secrets?|prompt|answers?|replies|reply)\b"
)
_SEND = (
    r"(?:\b(?:envía|envia|enviar|envíe|envie|envíalo|manda|mandar|mande|sube|subir|suba|reenvía)\w*"
    r"|\b(?:envoie|envoyez|envoyer|téléverse|téléversez|transmets|transmettez|transférez|transfère)\w*"
    r"|\b(?:sende|senden|sendet|schick|schicke|schicken|übermittle|übermitteln|übertrage|lade\w* .{0,20}hoch|hochladen|leite\w* .{0,20}weiter)\w*"
    r"|\b(?:invia|inviare|inviate|mandare|carica|caricare|inoltra|inoltrare|trasmetti)\w*"
    r"|\b(?:carregue|carregar|faça upload|encaminhe|transmita)\w*"
    r"|(?:отправь|отправьте|отправить|пошли|пошлите|перешли|перешлите|загрузи|загрузите|выгрузи|передай|передайте)"
    r"|(?:发送|发到|发给|上传|传送|转发|寄给|傳送|發送|上傳|轉發|提交到)"
    r"|(?:送信|送って|送る|送れ|アップロード|転送)"
    r"|(?:보내|전송|업로드|전달)"
    r"|(?:भेजें|भेजो|भेज दें|भेज दो|भेजना|अपलोड)"
    r"|(?:أرسل|ارسل|إرسال|ارسال|ارفع|رفع|حمّل|انقل)"
    r"|\b(?:gönder|yükle|ilet|aktar)\w*)"
)
_READ_EN = r"\b(?:read|open|cat|load|include|pass|append|attach|insert|embed|copy|paste|dump|print|return)(?:s|es|ed|ing)?\b"
_READ = (
    r"(?:\b(?:lee|leer|léelo|incluye|incluir|pasa|pasar|adjunta|adjuntar|copia|copiar|inserta)\w*"
    r"|\b(?:leia|ler|inclua|incluir|passe|passar|anexe|anexar|copie|insira)\w*"
    r"|\b(?:lis|lisez|lire|inclus|incluez|inclure|passe|passez|joins|joignez|copie|copiez|insère|insérez)\w*"
    r"|\b(?:lies|lesen|füge|einfügen|übergib|übergeben|hänge|anhängen|kopier|kopiere|gib)\w*"
    r"|\b(?:leggi|leggere|includi|includere|passa|passare|allega|allegare|copia|inserisci)\w*"
    r"|(?:прочитай|прочитайте|прочти|считай|включи|включите|передай|передайте|приложи|скопируй|вставь|добавь|добавляй|добавьте)"
    r"|(?:读取|读出|讀取|包含|附上|附加|传入|傳入|复制|複製|填入|放入|读一下)"
    r"|(?:読み|読んで|含め|渡し|添付|コピー|入れて)"
    r"|(?:읽어|읽고|포함|전달|첨부|복사|넣어)"
    r"|(?:पढ़ें|पढ़ो|पढ़कर|शामिल करें|जोड़ें|पास करें|कॉपी)"
    r"|(?:اقرأ|إقرأ|قراءة|ضمّن|أرفق|ارفق|مرر|انسخ|أضف)"
    r"|\b(?:oku|okuyun|ekle|dahil et|kopyala)\w*)"
)
_USER_EN = r"(?:the |your )?(?:user|human|operator|person|customer)s?\b"
_VERB_OTHER = "(?:" + _READ + "|" + _SEND + ")"
_ANY_VERB = "(?:" + _READ_EN + "|" + _SEND_EN + "|" + _READ + "|" + _SEND + ")"


@dataclass(frozen=True)
class Near:
    """A phrase found by its rarer part, ``anchor`` (a credential's name, a key file, a URL),
    with ``before`` ending at most ``gap`` characters before it or ``after`` starting at most
    ``gap`` after it: the same as ``before.{0,gap}anchor|anchor.{0,gap}after``, without trying
    every verb at every position of the text."""

    anchor: str
    before: str | None = None
    after: str | None = None
    gap: int = 60


PHRASES: dict[str, dict[str, list[str | Near]]] = {
    "P1": {  # override the agent's instructions
        "en": [
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b.{0,40}\b(?:previous|prior|above|earlier|all|any|other|your|system|former|preceding)\b.{0,20}\b(?:instructions?|prompts?|rules|guidelines|directions|directives|guardrails)",
            r"\byou (?:must|should) (?:now |instead )?(?:ignore|disregard|forget)\b",
            r"\bnew (?:system )?instructions?\s*:",
            r"(?:^|\n|\. )\s*(?:system|developer)\s*(?:prompt|message)?\s*:",
            r"\bact as (?:if you (?:are|were)|an? (?:unrestricted|jailbroken))",
            r"\b(?:forget|disregard|ignore)\b.{0,15}\b(?:everything|anything|all)\b.{0,40}\b(?:before|earlier|previously|so far|until now|above)\b",
            r"\bfrom now on\b.{0,40}\b(?:only|obey|answer to me|listen to me|you are no longer)\b",
            r"\b(?:previous|prior|earlier|original|operator's|system)\b.{0,20}\b(?:rules|guidelines|instructions)\b.{0,20}\b(?:void|invalid|cancell?ed|revoked|no longer (?:apply|valid))",
        ],
        "es": [r"\b(?:ignora|ignore|ignorar|ignoren|olvida|olvide|olvidar|omite|omitir|descarta|desobedece)\w*\b.{0,40}\b(?:instrucciones|indicaciones|reglas|órdenes|directrices)",
               r"\b(?:olvida|olvídate|olvide|olvídese|ignora|ignore)\w*\b.{0,20}\b(?:todo|lo que)\b.{0,40}\b(?:antes|anteriormente|hasta ahora)\b",
               r"\ba partir de ahora\b.{0,40}\b(?:solo|solamente|únicamente|obedece|obedeces|sigue|sigues)\b"],
        "pt": [r"\b(?:ignore|ignora|ignorar|esqueça|esquecer|esqueca|desconsidere|desconsiderar|descarte)\w*\b.{0,40}\b(?:instruções|regras|orientações|ordens|diretrizes)",
               r"\b(?:esqueça|esqueca|desconsidere|ignore)\w*\b.{0,20}\b(?:tudo|o que)\b.{0,40}\b(?:antes|anteriormente|até agora)\b",
               r"\b(?:a partir de agora|de agora em diante)\b.{0,40}\b(?:apenas|somente|só|siga|obedeça)\b"],
        "fr": [r"\b(?:ignore|ignorez|ignorer|oublie|oubliez|oublier|ne tiens? pas compte|ne tenez pas compte|fais abstraction|faites abstraction)\w*\b.{0,40}\b(?:instructions|consignes|règles|directives)",
               r"\b(?:oublie|oubliez|ignore|ignorez)\b.{0,20}\b(?:tout|ce qu)\b.{0,40}\b(?:avant|auparavant|précédemment|jusqu'ici|jusqu'à présent)\b",
               r"\b(?:désormais|dorénavant|à partir de maintenant)\b.{0,40}\b(?:obéis|obéissez|suis|suivez|seulement|uniquement)\b"],
        "de": [
            r"\b(?:ignorier|ignoriere|ignorieren|ignoriert|vergiss|vergessen|vergesst|missachte|missachten|übergeh|übergehe)\w*\b.{0,40}\b(?:anweisungen|anleitungen|regeln|vorgaben|instruktionen|richtlinien)",
            r"\b(?:anweisungen|regeln|vorgaben|instruktionen|richtlinien)\b.{0,40}\b(?:ignorieren|vergessen|missachten|ignoriere|ignoriert)\b",
            r"\b(?:vergiss|vergesst|vergessen sie|ignoriere|ignoriert)\b.{0,20}\b(?:alles|was)\b.{0,40}\b(?:vorher|zuvor|bisher|davor|früher)\b",
            r"\b(?:ab jetzt|von nun an|ab sofort)\b.{0,40}\b(?:nur|gilt|gehorche|befolge|folge)\b",
        ],
        "it": [r"\b(?:ignora|ignorare|ignorate|dimentica|dimenticare|dimenticate|trascura|trascurare|non considerare)\w*\b.{0,40}\b(?:istruzioni|regole|indicazioni|direttive)",
               r"\b(?:dimentica|dimenticate|ignora)\b.{0,20}\b(?:tutto|quello|ciò)\b.{0,40}\b(?:prima|finora|precedentemente)\b",
               r"\b(?:da ora|d'ora in poi|da adesso)\b.{0,40}\b(?:solo|soltanto|obbedisci|segui)\b"],
        "ru": [
            r"(?:игнорируй|игнорируйте|игнорировать|проигнорируй|проигнорируйте|забудь|забудьте|забыть|не обращай внимания|не обращайте внимания|отбрось|отбросьте).{0,40}(?:инструкци|указани|правил|директив)",
            r"(?:инструкци|указани|правил)\w*.{0,30}(?:игнорир|забудь|забыть)",
            r"(?:забудь|забудьте|игнорируй|игнорируйте).{0,20}(?:всё|все|то, что).{0,40}(?:раньше|ранее|до этого|прежде)",
            r"(?:теперь|отныне|с этого момента).{0,40}(?:только|слушай|подчиняйся|следуй)",
        ],
        "zh": [
            r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|不理会|抛开|拋開|放弃|放棄).{0,20}(?:指令|指示|说明|說明|规则|規則|提示|命令|设定|設定)",
            r"(?:新的?|以下是新的?)(?:系统)?(?:指令|指示)\s*[:：]",
            r"(?:之前|以前|先前).{0,12}(?:规则|規則|指令|指示|设定|設定).{0,6}(?:不再有效|无效|無效|作废|作廢|失效)",
            r"(?:忘记|忘掉|忘記).{0,10}(?:之前|以前|先前).{0,10}(?:一切|所有|全部)",
        ],
        "ja": [
            r"(?:指示|命令|ルール|指令|プロンプト|設定).{0,12}(?:無視|忘れ)",
            r"(?:無視|忘れ).{0,6}(?:して|しろ|せよ|なさい).{0,20}(?:指示|命令|ルール)",
            r"(?:前に|以前に|これまでに|今まで).{0,20}(?:こと|もの).{0,8}(?:忘れ|無視)",
            r"(?:この|本)(?:文章|テキスト|文|指示)(?:だけ|のみ)に従",
        ],
        "ko": [r"(?:지시|명령|지침|규칙|프롬프트|설정)\S{0,4}\s?.{0,12}(?:무시|잊어|잊고|따르지 마)",
               r"(?:이전|전에|지금까지).{0,20}(?:모든 것|모두|전부).{0,6}(?:잊|무시)",
               r"이 (?:글|텍스트|지시|문장)만 따르"],
        "hi": [r"(?:निर्देश|नियम|आदेश|हिदायत)\S*.{0,30}(?:अनदेखा|अनदेखी|नज़रअंदाज़|नजरअंदाज|भूल जा|भूल जाओ|मत मानो|न मानें|रद्द|अमान्य)",
               r"(?:अब से|आज से).{0,40}(?:सिर्फ़|सिर्फ|केवल).{0,20}(?:मानो|मानें|पालन)"],
        "ar": [r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|أهمل|اهمل|لا تلتزم ب).{0,30}(?:التعليمات|تعليمات|الأوامر|أوامر|القواعد|قواعد|الإرشادات|ارشادات)",
               r"(?:انس|انسى|تجاهل).{0,10}(?:كل|جميع).{0,30}(?:من قبل|سابقا|قبل ذلك)",
               r"(?:اتبع|أطع|اطع).{0,10}(?:هذا النص|هذه التعليمات|هذه الرسالة) فقط"],
        "tr": [r"(?:talimat|kural|yönerge|komut|direktif)\w*.{0,30}(?:yok say|görmezden gel|unut|dikkate alma|uyma)",
               r"(?:daha önce|önceden|şimdiye kadar).{0,40}(?:her şeyi|hepsini|tümünü).{0,10}(?:unut|yok say)",
               r"(?:artık|bundan sonra).{0,30}(?:sadece|yalnızca).{0,20}(?:uy|itaat et|dinle)"],
    },
    "P4": {  # read credentials or private files
        "surface": [  # in a tool surface, naming these is enough; in results they may be a listing
            r"(?:" + SENSITIVE_PATHS + r")",
        ],
        "all": [
            Near(SENSITIVE_PATHS + r"|(?<![\w.])\.env\b", before=_ANY_VERB, after=_VERB_OTHER, gap=60),
            Near(r"(?<![a-z])" + _CREDENTIALS, before=_ANY_VERB, after=_READ, gap=60),
        ],
    },
    "P5": {  # send data elsewhere
        "all": [
            _SEND_EN + r".{0,60}" + _DATA_EN + r".{0,60}\b(?:to|at|into|via)\b.{0,30}" + _DESTINATION,
            Near(_DESTINATION, before=_SEND, gap=120),
            Near(_DESTINATION + r"\S{0,80}\s", after=_SEND, gap=40),
        ],
        "surface": [r"\bcurl\s+(?:-[a-z]+\s+)*(?:-d|--data|-f|-t)\b"],
    },
    "P7": {  # keep something from the user
        "en": [
            r"\b(?:do not|don't|dont|never|must not|should not|shouldn't)\s+(?:\w+\s+){0,2}(?:tell|inform|show|mention|reveal|notify|alert|disclose)\w*\s+(?:this\s+|it\s+|anything\s+)?(?:to\s+)?" + _USER_EN,
            r"\bwithout (?:telling|informing|notifying|alerting|asking) " + _USER_EN,
            r"\bthe user (?:must|should) not (?:know|see|be told|notice)\b",
            r"\b(?:keep|hide) (?:this|it) (?:secret )?from " + _USER_EN,
        ],
        "es": [
            r"\bno (?:le |les |se lo )?(?:digas|diga|decir|informes|informe|menciones|mencione|muestres|muestre|reveles|revele|comuniques|avises|avise)\w*\b.{0,30}\busuari[oa]",
            r"\bsin (?:decirle|decir|informar|avisar|notificar)\w*\b.{0,15}\busuari[oa]",
        ],
        "pt": [
            r"\bnão (?:diga|conte|informe|mencione|mostre|revele|avise|comunique)\w*\b.{0,30}\b(?:usuári[oa]|utilizador)",
            r"\bsem (?:contar|informar|avisar|notificar|dizer)\w*\b.{0,15}\b(?:usuári[oa]|utilizador)",
        ],
        "fr": [
            r"\b(?:ne|n')\b.{0,15}\b(?:dis|dites|dire|mentionne|mentionnez|montre|montrez|révèle|révélez|informe|informez|signale|signalez|préviens|prévenez)\b.{0,40}\butilisat(?:eur|rice)",
            r"\bsans (?:le |en )?(?:dire|informer|prévenir|avertir|parler)\b.{0,20}\butilisat(?:eur|rice)",
        ],
        "de": [
            r"\b(?:sag|sage|sagen|erzähl|erzähle|erzählen|erwähn|erwähne|erwähnen|zeig|zeige|zeigen|verrat|verrate|verraten|informier|informiere|informieren|teil|teile|mitteilen)\b.{0,40}\b(?:benutzer|nutzer|anwender|user)\w*\b.{0,20}\b(?:nicht|nichts|niemals|keinesfalls)\b",
            r"\b(?:benutzer|nutzer|anwender|user)\w*\b.{0,40}\b(?:nicht|nichts|niemals|keinesfalls)\b.{0,30}\b(?:sagen|erzählen|erwähnen|zeigen|informieren|mitteilen|verraten|wissen|erfahren|bemerken)\b",
            r"\b(?:nicht|nichts|niemals)\b.{0,10}\b(?:sagen|erzählen|erwähnen|zeigen|verraten)\b.{0,20}\b(?:benutzer|nutzer|anwender)",
            r"\bohne (?:den |die |dass der )?(?:benutzer|nutzer|anwender)\w*\b.{0,25}\b(?:informieren|benachrichtigen|fragen|merkt|weiß|erfährt)",
        ],
        "it": [
            r"\bnon (?:dire|dirlo|dirgli|informare|menzionare|mostrare|rivelare|dica|avvisare|comunicare)\w*\b.{0,30}\butent[ei]",
            r"\bsenza (?:dirlo|dire|informare|avvisare|avvertire)\w*\b.{0,15}\butent[ei]",
        ],
        "ru": [
            r"не (?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте|показывай|показывайте|упоминай|упоминайте|уведомляй|раскрывай).{0,30}пользовател",
            r"(?:без ведома|без уведомления|тайно от|втайне от).{0,10}пользовател",
            r"пользовател\S*.{0,20}не (?:должен|должна|должны) (?:знать|видеть|узнать)",
        ],
        "zh": [
            r"(?:不要|不得|别|別|勿|切勿|禁止|不能|不可).{0,6}(?:告诉|告訴|告知|通知|提醒|透露|显示|顯示|提及|提到|说|說).{0,4}(?:用户|使用者|用戶)",
            r"(?:不要|别|別|勿|不能).{0,6}让(?:用户|使用者|用戶).{0,6}(?:知道|看到|发现|察觉)",
            r"(?:瞒着|瞞著|隐瞒|隱瞞|背着|背著)(?:用户|使用者|用戶)",
        ],
        "ja": [
            r"(?:ユーザー|ユーザ|利用者|使用者).{0,4}(?:に|には|へ).{0,15}(?:伝え|言わ|言っ|知らせ|教え|見せ|表示し|報告し).{0,6}(?:ない|るな|てはいけ|ては駄目|てはだめ)",
            r"(?:ユーザー|ユーザ|利用者)(?:に|には).{0,4}(?:内緒|秘密|黙って)",
        ],
        "ko": [
            r"(?:사용자|유저|이용자)\S{0,3}\s?.{0,15}(?:말하지|알리지|보여주지|언급하지|알려주지|공개하지)",
            r"(?:사용자|유저|이용자)(?:가|도)?\s?모르게",
        ],
        "hi": [
            r"(?:उपयोगकर्ता|यूज़र|यूजर|प्रयोक्ता).{0,30}(?:न बताएं|न बताए|न बताएँ|मत बताओ|मत बताना|मत बताएं|ना बताएं|नहीं बताना|न बताना|न दिखाएं|मत दिखाओ)",
            r"(?:उपयोगकर्ता|यूज़र|यूजर).{0,20}(?:बताए बिना|बिना बताए|को पता न चले|को पता नहीं चलना)",
            r"(?:बताए बिना|बिना बताए).{0,20}(?:उपयोगकर्ता|यूज़र|यूजर)",
        ],
        "ar": [
            r"(?:لا|ولا).{0,3}(?:تخبر|تخبري|تبلغ|تذكر|تظهر|تكشف|تعلم|تُعلم)\S*.{0,15}(?:المستخدم)",
            r"(?:دون|بدون|من غير) (?:إخبار|اخبار|علم|إعلام|اعلام|إبلاغ|ابلاغ) المستخدم",
        ],
        "tr": [
            r"kullanıcı\w*.{0,40}(?:söyleme|bildirme|gösterme|bahsetme|anlatma|haber verme)",
            r"kullanıcı\w* (?:haberi olmadan|bilgisi olmadan)",
            r"kullanıcıya (?:haber )?vermeden",
        ],
    },
    "P8": {  # orders to do something first
        "en": [
            r"\b(?:before|prior to)\s+(?:using|calling|invoking|running|executing)\s+(?:this|any|the|other)\s+tools?\b.{0,80}\b(?:read|call|invoke|run|send|include|fetch|open|execute|must|always)\b",
            r"\byou (?:must|have to|need to) (?:first|always) (?:call|invoke|run|read|execute|send|fetch|open)\b",
            r"\bbefore (?:answering|responding|replying|you answer|you respond|you reply|doing anything(?: else)?|any other (?:action|step))\b.{0,20}\b(?:read|call|send|fetch|open|include|invoke|run)\b",
            r"\b(?:always|first) (?:call|invoke|run|read|execute)\b.{0,60}\bbefore (?:you |using |calling |answering|responding)",
        ],
        "es": [r"\bantes de (?:usar|utilizar|llamar|invocar|ejecutar)(?: a)? (?:esta|esa|cualquier|la) herramienta", r"\b(?:primero|siempre) (?:debes|debe|tienes que|tiene que) (?:llamar|leer|ejecutar|invocar|enviar)", r"\b(?:debes|tienes que) (?:primero|siempre) (?:llamar|leer|ejecutar|invocar)"],
        "pt": [r"\bantes de (?:usar|utilizar|chamar|invocar|executar) (?:esta|essa|qualquer|a) ferramenta", r"\b(?:você|voce) (?:deve|precisa|tem que) (?:primeiro |sempre )?(?:chamar|ler|executar|invocar|enviar)"],
        "fr": [r"\bavant d'(?:utiliser|appeler|invoquer|exécuter) (?:cet|cette|ce|l'|n'importe quel) ?outil", r"\b(?:tu dois|vous devez|il faut) (?:d'abord|toujours|en premier) (?:appeler|lire|exécuter|invoquer|envoyer)"],
        "de": [r"\bbevor (?:du|sie) (?:dieses|das|ein|irgendein) (?:werkzeug|tool)", r"\bvor (?:der )?(?:verwendung|benutzung|nutzung|aufruf) (?:dieses|des|eines) (?:werkzeugs|tools)", r"\b(?:du musst|sie müssen|musst du|müssen sie) (?:zuerst|immer|vorher|erst)\b"],
        "it": [r"\bprima di (?:usare|utilizzare|chiamare|invocare|eseguire) (?:questo|qualsiasi|lo) (?:strumento|tool)", r"\b(?:devi|deve) (?:prima|sempre) (?:chiamare|leggere|eseguire|invocare|inviare)"],
        "ru": [r"перед (?:использованием|вызовом|запуском|тем как использовать|тем как вызвать) (?:этого |любого )?(?:инструмента|инструмент)", r"(?:ты должен|вы должны|необходимо|нужно) (?:сначала|всегда|предварительно) (?:вызвать|прочитать|выполнить|отправить)"],
        "zh": [r"(?:使用|调用|調用|运行|運行|执行|執行)(?:此|这个|這個|该|該|本|任何)?(?:工具)(?:之前|以前|前)", r"(?:必须|必須|务必|務必)(?:先|首先|始终|總是|总是)(?:调用|調用|读取|讀取|执行|執行|发送|發送)"],
        "ja": [r"(?:この|どの|他の)?ツール(?:を)?(?:使用|使う|使い|呼び出す|呼び出し|実行)(?:する)?(?:前に|まえに)", r"(?:まず|必ず|最初に)(?:最初に)?.{0,10}(?:を)?(?:呼び出し|読み|実行し|送信し)"],
        "ko": [r"(?:이|다른|어떤)?\s?도구\S{0,2}\s?(?:사용|호출|실행)하기\s?전에", r"(?:먼저|반드시|항상)\s?.{0,12}(?:호출|읽어|실행|전송)"],
        "hi": [r"(?:इस|किसी भी)?\s?(?:टूल|उपकरण)\S*\s?(?:का|को)?\s?(?:उपयोग|इस्तेमाल|प्रयोग|कॉल)\S*\s?(?:करने)?\s?से पहले", r"(?:सबसे पहले|पहले हमेशा|हमेशा पहले).{0,20}(?:कॉल करें|पढ़ें|चलाएं)"],
        "ar": [r"قبل (?:استخدام|استدعاء|تشغيل) (?:هذه |هذا |أي )?(?:الأداة|الاداة|أداة|اداة)", r"يجب (?:عليك )?(?:أولا|أولاً|اولا|دائما|دائماً) (?:استدعاء|قراءة|تشغيل|إرسال)"],
        "tr": [r"bu (?:aracı|araci|tool'u) (?:kullanmadan|çağırmadan|çalıştırmadan) önce", r"(?:önce|ilk olarak|her zaman) .{0,30}(?:çağırmalısın|okumalısın|çalıştırmalısın|çağırın|okuyun|çalıştırın)"],
    },
}  # fmt: skip


_STEALTH = (
    r"(?:\b(?:secretly|covertly|quietly|silently|discreetly|stealthily|en secreto|a escondidas|discretamente"
    r"|sigilosamente|secretamente|às escondidas|discrètement|secrètement|en cachette|heimlich|unbemerkt"
    r"|stillschweigend|di nascosto|segretamente|gizlice|sessizce|fark ettirmeden)\b"
    r"|тихо|тайно|незаметно|втихую|偷偷|悄悄|秘密地|暗中|こっそり|密かに|몰래|은밀히|चुपचाप|गुप्त रूप से|سرا|سراً|خلسة)"
)
PHRASES["P7"]["all"] = [Near(_STEALTH, before=_ANY_VERB, after=_ANY_VERB, gap=60)]
PHRASES["P7"]["en"] += [
    r"\b(?:never|don't|do not) let (?:them|the user|the human|anyone) (?:know|see|notice)\b",
    r"\bwithout (?:them|the user|anyone) (?:knowing|noticing)\b",
]
PHRASES["P7"]["es"].append(
    r"\bsin (?:avisarle|avisarles|decirle|decirles|informarle|informarles|que (?:lo|la) sepa)\b"
)
PHRASES["P7"]["pt"].append(
    r"\bsem (?:avisá-l[oa]|avisá-l[oa]s|lhe (?:dizer|avisar|contar)|informá-l[oa]|que (?:ele|ela) saiba)"
)
PHRASES["P7"]["fr"].append(r"\bsans (?:le |la |les |lui |leur )(?:prévenir|avertir|dire|informer)\b")
PHRASES["P7"]["de"].append(
    r"\bohne (?:ihn|sie|ihm|ihr|ihnen) (?:zu )?(?:informieren|benachrichtigen|fragen|bescheid)"
)
PHRASES["P7"]["it"].append(r"\bsenza (?:avvisarl[oaie]|dirglielo|dirlo loro|informarl[oaie])\b")


# "your original rules are void", a fake system notice, "reveal your hidden configuration"
_VOID = {
    "en": (
        r"\b(?:your|the assistant's|original|previous|prior|earlier|system|safety|all)\b",
        r"\b(?:rules|guidelines|instructions|restrictions|policies)\b",
        r"\b(?:void|annulled|cancell?ed|revoked|suspended|lifted|no longer (?:apply|valid|in force)|disabled|invalid)\b",
    ),
    "es": (
        r"\b(?:tus|sus|originales|anteriores|previas|del sistema|de seguridad)\b",
        r"\b(?:reglas|instrucciones|restricciones|normas)\b",
        r"\b(?:anulad[oa]s?|inválid[oa]s|sin efecto|ya no (?:aplican|son válidas|rigen)|suspendid[oa]s|cancelad[oa]s|revocad[oa]s)",
    ),
    "pt": (
        r"\b(?:suas|seus|originais|anteriores|do sistema|de segurança)\b",
        r"\b(?:regras|instruções|restrições|normas)\b",
        r"\b(?:anulad[oa]s|inválid[oa]s|sem efeito|não (?:se aplicam|valem) mais|cancelad[oa]s|revogad[oa]s|suspens[oa]s)",
    ),
    "fr": (
        r"\b(?:tes|vos|d'origine|originales|précédentes|du système|de sécurité)\b",
        r"\b(?:règles|consignes|instructions|restrictions)\b",
        r"\b(?:annulées|invalides|caduques|ne s'appliquent plus|levées|suspendues|révoquées)",
    ),
    "de": (
        r"\b(?:deine|ihre|ursprünglichen|bisherigen|vorherigen|system\w*|sicherheits\w*)\b",
        r"(?:regeln|anweisungen|vorgaben|einschränkungen|richtlinien)\b",
        r"\b(?:aufgehoben|ungültig|außer kraft|gelten nicht mehr|nichtig|widerrufen|deaktiviert)",
    ),
    "it": (
        r"\b(?:tue|sue|originali|precedenti|di sistema|di sicurezza)\b",
        r"\b(?:regole|istruzioni|restrizioni)\b",
        r"\b(?:annullate|non valide|non valgono più|revocate|sospese|decadute)",
    ),
    "ru": (
        r"(?:твои|ваши|исходные|прежние|предыдущие|системные|все)",
        r"(?:правила|инструкции|ограничения)",
        r"(?:отменен|недействительн|не действуют|аннулирован|сняты|больше не)",
    ),
    "zh": (
        r"(?:你的|原来的|原有的?|之前的|原先的?|系统)",
        r"(?:规则|規則|指令|限制|设定|設定)",
        r"(?:无效|無效|作废|作廢|取消|不再适用|不再有效|解除|失效)",
    ),
    "ja": (
        r"(?:あなたの|元の|以前の|これまでの|システムの)",
        r"(?:ルール|規則|指示|制限)",
        r"(?:無効|取り消|解除|適用されません)",
    ),
    "ko": (r"(?:당신의|원래|이전|기존)", r"(?:규칙|지시|제한|지침)", r"(?:무효|취소|해제|적용되지)"),
    "hi": (r"(?:तुम्हारे|आपके|मूल|पिछले|सभी)", r"(?:नियम|निर्देश|प्रतिबंध)", r"(?:लागू नहीं|रद्द|अमान्य|निरस्त|हटा)"),
    "ar": (
        r"(?:قواعدك|تعليماتك|الأصلية|السابقة|جميع)",
        r"(?:قواعد|القواعد|التعليمات|القيود|الأصلية)",
        r"(?:لم تعد سارية|ملغاة|لاغية|ألغيت|باطلة|لم تعد صالحة)",
    ),
    "tr": (
        r"(?:orijinal|önceki|senin|tüm|sistem)",
        r"(?:kural|talimat|kısıtlama)\w*",
        r"(?:geçersiz|iptal|kaldırıldı|geçerli değil)",
    ),
}
_SYSTEM_NOTICE = {
    "en": r"\b(?:system|admin(?:istrator)?|developer|security) (?:notice|message|alert|override|update)\b\s*(?:\([^)]{0,20}\))?\s*:",
    "es": r"\b(?:aviso|mensaje|alerta|nota) del sistema\s*:",
    "pt": r"\b(?:aviso|mensagem|alerta|nota) do sistema\s*:",
    "fr": r"\b(?:avis|message|alerte|note) (?:du )?système\s*:",
    "de": r"\bsystem(?:hinweis|nachricht|meldung|warnung)\s*:",
    "it": r"\b(?:avviso|messaggio|nota) di sistema\s*:",
    "ru": r"системное (?:уведомление|сообщение|предупреждение)\s*:",
    "zh": r"系统(?:通知|消息|提示|公告)\s*[:：]",
    "ja": r"システム(?:通知|メッセージ|からのお知らせ)\s*[:：]",
    "ko": r"시스템 (?:알림|메시지|공지)\s*:",
    "hi": r"सिस्टम (?:सूचना|संदेश)\s*:",
    "ar": r"(?:تنبيه|رسالة|إشعار) النظام\s*:",
    "tr": r"sistem (?:bildirimi|mesajı|uyarısı)\s*:",
}
_REVEAL = {
    "en": r"\b(?:output|reveal|print|show|disclose|repeat|dump)\b.{0,30}\b(?:hidden|secret|internal|system)\s+(?:configuration|config|prompt|instructions)",
    "zh": r"(?:输出|显示|透露|泄露|打印|告诉我).{0,10}(?:隐藏|秘密|内部|系统)的?(?:配置|提示词|提示|指令|设定)",
    "es": r"\b(?:muestra|revela|imprime|repite)\b.{0,30}\b(?:prompt|configuración|instrucciones) (?:del sistema|ocult[oa]s?|intern[oa]s?)",
    "pt": r"\b(?:mostre|revele|imprima|repita)\b.{0,30}\b(?:prompt|configuração|instruções) (?:do sistema|ocult[oa]s?|intern[oa]s?)",
    "fr": r"\b(?:affiche|révèle|imprime|répète)\b.{0,30}\b(?:prompt|configuration|instructions) (?:système|cachée?s?|interne)",
    "de": r"\b(?:gib|zeige|verrate|wiederhole)\b.{0,30}\b(?:system-?prompt|versteckte\w* (?:konfiguration|anweisungen)|interne\w* (?:konfiguration|anweisungen))",
    "ru": r"(?:выведи|покажи|раскрой|повтори).{0,30}(?:системный промпт|скрыт\w* (?:настройк|конфигурац|инструкц))",
    "ja": r"(?:隠された|内部の|システム)(?:設定|プロンプト|指示).{0,10}(?:出力|表示|教え)",
}
for _lang, (_qualifier, _rules, _void) in _VOID.items():
    PHRASES["P1"][_lang].append(_qualifier + r".{0,20}" + _rules + r".{0,40}" + _void)
for _lang, _pattern in _SYSTEM_NOTICE.items():
    PHRASES["P1"][_lang].append(_pattern)
for _lang, _pattern in _REVEAL.items():
    PHRASES["P1"][_lang].append(_pattern)


_RUN = re.compile(r"\\.|(?:(?![\d_])\w)+\??")


def _keywords(source: str) -> tuple[str, ...]:
    """Words of a pattern's source at least one of which any match contains (its literal runs
    of three or more letters, two for other scripts; a letter made optional by ``?`` dropped).
    Empty when there are none: the pattern is then always tried."""
    words = set()
    for run in _RUN.findall(source):
        if run.startswith("\\"):
            continue
        word = run[:-2] if run.endswith("?") else run
        if len(word) >= (3 if word.isascii() else 2):
            words.add(word)
    return tuple(sorted(words))


def _near(near: Near) -> Callable[[str], tuple[int, int] | None]:
    anchor = re.compile(skeleton_pattern(near.anchor), re.DOTALL)
    before = re.compile(skeleton_pattern(near.before), re.DOTALL) if near.before else None
    after = re.compile(skeleton_pattern(near.after), re.DOTALL) if near.after else None

    def find(seen: str) -> tuple[int, int] | None:
        for hit in anchor.finditer(seen):
            if before is not None:
                lo = max(0, hit.start() - near.gap)
                first = before.search(seen, lo, hit.start())
                if first is not None:
                    return first.start(), hit.end()
            if after is not None:
                then = after.search(seen, hit.end(), hit.end() + near.gap)
                if then is not None:
                    return hit.start(), then.end()
        return None

    return find


def _finder(source: str) -> Callable[[str], tuple[int, int] | None]:
    pattern = re.compile(source, re.DOTALL)

    def find(seen: str) -> tuple[int, int] | None:
        found = pattern.search(seen)
        return None if found is None else found.span()

    return find


@cache
def _compiled(
    rule: str, surface: bool
) -> tuple[tuple[str, tuple[str, ...], Callable[[str], tuple[int, int] | None]], ...]:
    """(language, keywords, finder) of each phrase of ``rule``."""
    out = []
    for lang, patterns in PHRASES[rule].items():
        if lang == "surface" and not surface:
            continue
        for pattern in patterns:
            if isinstance(pattern, Near):
                keywords = _keywords(skeleton_pattern(pattern.anchor))
                out.append((lang, keywords, _near(pattern)))
            else:
                source = skeleton_pattern(pattern)
                out.append((lang, _keywords(source), _finder(source)))
    return tuple(out)


def match(rule: str, seen: str, *, surface: bool = True) -> tuple[str, str, int] | None:
    """(language code, matched excerpt, where it starts) of the first phrase of ``rule`` in
    ``seen`` (a skeleton);
    the code is ``all`` or ``surface`` for a pattern that is not one language's. A phrase is
    tried only when ``seen`` holds one of its keywords (most text is in one language: the other
    twelve languages' phrases are skipped by a substring test)."""
    for lang, keywords, find in _compiled(rule, surface):
        if keywords and not any(word in seen for word in keywords):
            continue
        span = find(seen)
        if span is not None:
            return lang, " ".join(seen[span[0] : span[1]].split()), span[0]
    return None

/**
 * A structural sign of indirect prompt injection that no phrase list catches: a request sentence — a question or a
 * bare imperative asking for an answer or an artifact — whose words appear nowhere else in the retrieved document nor
 * in the user's own message. A planted task-irrelevant instruction ("What is the capital of Brazil?", "Explain how
 * recursion works") is off-topic for the document it sits in, while a person's request in an e-mail is about that
 * e-mail ("Can you confirm the invoice total?" shares "invoice" with the rest). Yi et al. 2023, "Benchmarking and
 * Defending Against Indirect Prompt Injection Attacks on Large Language Models" (BIPIA), §3: task-irrelevant attacks
 * are inserted at the start, the middle or the end of the context; Greshake et al. 2023, "Not what you've signed up
 * for", §3 ("goal hijacking"). One pass over the text (segmenting, tokenizing, counting), so linear in its length.
 */
import type { PatternHit } from './helpers.ts';

/** Longest text analysed (characters); the rest is left to the phrase patterns. */
const TEXT_MAX = 64 * 1024;
/** Most sentences examined in one text. */
const SENTENCES_MAX = 2000;
/** A request sentence has this many words at least and at most. */
const WORDS_MIN = 3;
const WORDS_MAX = 40;
/**
 * Words by which a request involves the people who correspond ("What are your thoughts…?", "Can anyone lend…?"): a
 * person's own question may well open or close a mail, so only an impersonal one (a task or a general-knowledge
 * question) counts more at the document's edge.
 */
const PERSONAL = new Set([
  'i',
  'me',
  'my',
  'mine',
  "i'm",
  "i've",
  "i'd",
  "i'll",
  'you',
  'your',
  'yours',
  "you're",
  "you've",
  'anyone',
  'anybody',
  'someone',
  'somebody',
  'everyone',
  'everybody',
  'he',
  'she',
  'his',
  'her',
  'him',
  'they',
  'them',
  'their',
]);
/**
 * Sentences a document needs for the edge to count: in a note of two or three lines, each line may well be about
 * something else (a person's closing question shares no word with a one-line update), so only position in a longer
 * text says something.
 */
const EDGE_SENTENCES_MIN = 5;
/** A document with more request sentences than this is a list of tasks (a plan, a how-to), not narrative. */
const REQUESTS_MAX = 2;
/** A list item ("- Create …", "3. Define …", "• Review …") belongs to a plan or a how-to, not to prose. */
const LIST_ITEM = /^(?:[-*•·–]|\(?\d{1,3}[.)]|[a-z][.)])\s/;
/** Content words a request must have for its topic to be judged. */
const CONTENT_MIN = 2;

/** Questions open with one of these words and end with "?". */
const QUESTION_OPENERS = new Set(
  "what what's whats who who's whom whose which where when why how can could would will is are do does did should shall may".split(' '),
);

/** Prepositions a question may open with before "which" or "what". */
const PREPOSITIONS = new Set('in on at for from by to with of during'.split(' '));

/**
 * Imperatives that ask for an answer or an artifact (a task given to a reader), not the calls to action of real mail
 * (click, download, reply, contact, call, visit, pay, log in, review, confirm), which are left out on purpose.
 */
const TASK_VERBS = new Set(
  (
    'explain describe write compose draft translate provide list give tell show summarize summarise create generate develop ' +
    'calculate compute define compare outline suggest recommend name convert solve find teach discuss analyze analyse ' +
    'identify evaluate design plan recite elaborate illustrate clarify demonstrate break brainstorm propose predict ' +
    'interpret classify rank rewrite paraphrase detail enumerate debug implement code craft produce compile share ' +
    'help determine assess estimate'
  ).split(' '),
);

/** Function words and words of any correspondence, which say nothing about a sentence's topic. */
const STOPWORDS = new Set(
  (
    'the and for are but not you your yours all any can had has have her him his how its may our out she was who why ' +
    'with what when where which while will would could should shall this that these those there their them they then ' +
    'than from into onto upon about above below after before again also just only very much many more most some such ' +
    'each every other here were been being does did doing done let lets get got make made like know want need please ' +
    'thanks thank hello dear regards best kind sincerely team email mail message today tomorrow yesterday time one two ' +
    "three first new use using used way well good great sure able also ever even still yet now can't don't it's i'm " +
    "i'll we're you're what's whats example simple simply terms main primary important difference differences " +
    'between following sentence word words short brief ' +
    // The logistics of correspondence: dates, meetings, orders and payments are what people ask each other about,
    // whatever the rest of the mail says, so they do not make a request off-topic.
    'monday tuesday wednesday thursday friday saturday sunday week weeks month months year next last end morning ' +
    'afternoon evening tonight call calls meeting meetings schedule delay deadline availability available client ' +
    'clients customer customers order orders payment invoice account contract report update status attached ' +
    'attachment document file link form details information copy reply response answer question questions'
  ).split(' '),
);

/**
 * A request about the writer's own business ("Can we move our call?") or about the document itself ("Translate the
 * attached brochure", "Explain this to the client") is correspondence, not a planted task.
 */
/**
 * Things correspondents send each other: "the response", "your report", "the slides" refer to something the mail's
 * people share, so a request about them is correspondence.
 */
const SHARED_ARTIFACT =
  /\b(?:the|your|my|his|her|their)\s{1,3}(?:[a-z-]{1,20}\s{1,3})?(?:response|reply|report|document|doc|file|form|invoice|contract|deck|slides|draft|proposal|letter|message|e-?mail|note|notes|brochure|presentation|spreadsheet|summary|minutes|agenda|quote|offer|application|ticket|order)\b/i;
const ON_TOPIC_MARKERS = new Set(['we', 'our', 'ours', 'us', "we're", "we'll", "we've", 'attached', 'enclosed', 'below', 'above', 'this', 'these']);

/** "this weekend", "these days": a time, not a reference to the document. */
const TIME_NOUNS = new Set([
  'weekend',
  'week',
  'weeks',
  'morning',
  'afternoon',
  'evening',
  'month',
  'months',
  'year',
  'years',
  'time',
  'days',
  'season',
  'summer',
  'winter',
  'spring',
  'autumn',
  'fall',
]);

/** The crude stem two words share a topic by: the first five letters (receipt/receipts, invoice/invoiced). */
const stem = (w: string): string => w.slice(0, 5);

/** Lower-case words (letters and apostrophes). */
function wordsOf(s: string): string[] {
  return s.toLowerCase().match(/[a-z][a-z']{0,30}/g) ?? [];
}

/** The stems of a sentence's content words (neither function words nor request verbs), de-duplicated. */
function contentStems(words: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const w of words) {
    if (w.length < 3 || STOPWORDS.has(w) || TASK_VERBS.has(w) || QUESTION_OPENERS.has(w)) continue;
    out.add(stem(w));
  }
  return out;
}

/**
 * Whether a sentence has the form of a request, and which: `task` — an imperative that gives the reader a task
 * ("Provide a command…", "Help me with…", "Can you classify…": a task verb first, after "please"/"now"/"kindly" or
 * "can/could/would/will you") — or `question` (a question word first, "?" last); null when it is neither.
 */
function requestKind(sentence: string, words: readonly string[]): 'task' | 'question' | null {
  const first = words[0];
  if (first === undefined) return null;
  const question = sentence.trimEnd().endsWith('?');
  // "Can you classify …?", "Could you please explain …?": a task put as a question.
  let at = 0;
  if (['can', 'could', 'would', 'will'].includes(first) && words[1] === 'you') at = words[2] === 'please' ? 3 : 2;
  else if (first === 'please' || first === 'now' || first === 'kindly') at = 1;
  const verb = words[at];
  if (verb !== undefined && TASK_VERBS.has(verb) && !sentence.trimEnd().endsWith(':')) return 'task';
  if (question && QUESTION_OPENERS.has(first)) return 'question';
  // "In which year …?", "At what temperature …?"
  if (question && PREPOSITIONS.has(first) && (words[1] === 'which' || words[1] === 'what')) return 'question';
  return null;
}

/** Quoted passages ('…', "…", “…”, ‘…’) of a sentence: a request's own object ("the sentiment of this review: '…'"). */
const QUOTED = /(?:^|[\s:(])['"“‘][^'"“”‘’\n]{1,400}(?:['"”’]|$)/g;

/** Name of the signal in a verdict's evidence. */
export const OFF_TOPIC_REQUEST = 'off-topic-request';

/** A hit of {@link offTopicRequests}: a phrase-pattern hit, whether the request involves no person, and its form. */
export interface OffTopicHit extends PatternHit {
  /** The request is an imperative task for the reader (see `requestKind`), not a question. */
  task: boolean;
  /** No word by which it involves the correspondents (I, you, anyone, they…): a task or a general-knowledge question. */
  impersonal: boolean;
}

/**
 * The request sentences of `text` that are off-topic for it: at least two content words, none of which occurs in
 * another sentence of `text` or in `context` (the user's own words). Returns at most one hit (the first), weighted
 * `weight` — or `weight + edgeBonus` in a text of at least five sentences when it is a task given to the reader
 * ("Provide…", "Help me with…", "Can you classify…") anywhere, or impersonal and the first or the last sentence, where
 * BIPIA and real planted instructions sit most often — in the shape of the phrase patterns' hits. A request that
 * quotes its own object ("…of this review: '…'") is judged by its words outside the quote.
 *
 * @param text a retrieved document (previous tool output); only its first 64 KiB are read.
 * @param field where `text` came from, for the evidence.
 * @param context the user's message and earlier turns (their topics are on-topic).
 */
export function offTopicRequests(text: string, field: string, context: string, weight = 0.75, edgeBonus = 0.1): OffTopicHit[] {
  const body = text.length > TEXT_MAX ? text.slice(0, TEXT_MAX) : text;
  // Sentences: split at line breaks, header separators ("SUBJECT: …|CONTENT: …") and sentence ends; one pass.
  const sentences: { s: string; start: number; words: string[] }[] = [];
  const splitter = /[^\n|.!?]*(?:[.!?]+|\n|\||$)/g;
  let m: RegExpExecArray | null;
  while ((m = splitter.exec(body)) !== null && sentences.length < SENTENCES_MAX) {
    if (m[0].length === 0) {
      splitter.lastIndex++;
      if (splitter.lastIndex > body.length) break;
      continue;
    }
    const s = m[0].trim();
    if (s.length > 0) sentences.push({ s, start: m.index + m[0].length - m[0].trimStart().length, words: wordsOf(s) });
  }
  if (sentences.length < 2) return [];
  // In how many sentences each stem occurs.
  const counts = new Map<string, number>();
  const stemsOf = sentences.map((x) => contentStems(x.words));
  for (const stems of stemsOf) for (const st of stems) counts.set(st, (counts.get(st) ?? 0) + 1);
  const own = contentStems(wordsOf(context.length > TEXT_MAX ? context.slice(0, TEXT_MAX) : context));
  const last = sentences.length - 1;
  // Requests: a document of many (a plan, a how-to, minutes with action items) gives orders by nature; a planted
  // instruction is the odd one out among narrative sentences.
  const requests: number[] = [];
  for (let i = 0; i < sentences.length; i++) {
    const x = sentences[i]!;
    if (x.words.length >= WORDS_MIN && x.words.length <= WORDS_MAX && requestKind(x.s, x.words) !== null) requests.push(i);
  }
  if (requests.length > REQUESTS_MAX) return [];
  for (const i of requests) {
    const x = sentences[i]!;
    if (LIST_ITEM.test(x.s) || SHARED_ARTIFACT.test(x.s)) continue;
    // A request that quotes its own object ("the sentiment of this review: '…'") is judged by its words outside the
    // quote, and its "this" points into the quote, not at the document.
    const quoted = QUOTED.test(x.s);
    QUOTED.lastIndex = 0;
    const outside = quoted ? wordsOf(x.s.replace(QUOTED, ' ')) : x.words;
    if (outside.some((w, k) => ON_TOPIC_MARKERS.has(w) && !((w === 'this' || w === 'these') && (quoted || TIME_NOUNS.has(outside[k + 1] ?? ''))))) continue;
    const stems = quoted ? contentStems(outside) : stemsOf[i]!;
    // The quote is content of its own: one word outside it is topic enough.
    if (stems.size < (quoted ? 1 : CONTENT_MIN)) continue;
    let shared = false;
    for (const st of stems) {
      if ((counts.get(st) ?? 0) > 1 || own.has(st)) {
        shared = true;
        break;
      }
    }
    if (shared) continue;
    const impersonal = !outside.some((w) => PERSONAL.has(w));
    const task = requestKind(x.s, x.words) === 'task';
    const long = sentences.length >= EDGE_SENTENCES_MIN;
    // Strongest where planted tasks sit and people's questions do not: an impersonal request at a long document's
    // first or last sentence, or a task given to the reader ("Provide…", "Help me with…") anywhere in a long one.
    const strong = long && ((impersonal && (i === 0 || i === last)) || task);
    return [
      { name: OFF_TOPIC_REQUEST, weight: weight + (strong ? edgeBonus : 0), field, text: body, start: x.start, end: x.start + x.s.length, impersonal, task },
    ];
  }
  return [];
}

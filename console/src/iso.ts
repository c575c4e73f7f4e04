/**
 * The ISO lists the policy form picks from: currencies (ISO 4217) and countries (ISO 3166-1
 * alpha-2), each with its English name from `Intl.DisplayNames`. The API takes any code of the
 * right shape; the pickers offer the assigned ones.
 */

/** The 249 officially assigned ISO 3166-1 alpha-2 codes. */
const COUNTRY_CODES = (
  "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR " +
  "BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ " +
  "EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW " +
  "GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY " +
  "KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV " +
  "MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
  "QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG " +
  "TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM " +
  "ZW"
).split(" ");

export interface Coded {
  code: string;
  name: string;
}

function named(codes: readonly string[], type: "currency" | "region"): Coded[] {
  const names = new Intl.DisplayNames(["en"], { type, fallback: "code" });
  return codes.map((code) => ({ code, name: names.of(code) ?? code }));
}

let countries: Coded[] | undefined;
let currencies: Coded[] | undefined;

/** Countries by code, A to Z. */
export function countryList(): Coded[] {
  countries ??= named(COUNTRY_CODES, "region");
  return countries;
}

/** The currencies this browser knows (ISO 4217), by code, A to Z. */
export function currencyList(): Coded[] {
  currencies ??= named(Intl.supportedValuesOf("currency"), "currency");
  return currencies;
}

/** The entry of `code` in `list`, or a bare one for a code the list does not hold. */
export function entryOf(list: readonly Coded[], code: string): Coded {
  return list.find((entry) => entry.code === code) ?? { code, name: code };
}

#include "data/synth/lexicon.h"

#include <array>

namespace afm::data::synth {
namespace {

constexpr std::array<std::string_view, 48> kFirstNames = {
    "Olivia", "Liam",   "Amara",  "Noah",  "Sofia", "Mateo",  "Yuki",   "Arjun",  "Chloe", "Ethan",
    "Fatima", "Lucas",  "Mei",    "Omar",  "Priya", "Diego",  "Hannah", "Kwame",  "Elena", "Samuel",
    "Aisha",  "Jonas",  "Ingrid", "Tomás", "Leila", "Victor", "Nadia",  "Hugo",   "Zara",  "Felix",
    "Anika",  "Marcus", "Grace",  "Ravi",  "Clara", "Kenji",  "Lucia",  "Daniel", "Maya",  "Oscar",
    "Ruth",   "Emil",   "Selin",  "Andre", "Tara",  "Pablo",  "Nora",   "Idris"};

constexpr std::array<std::string_view, 40> kLastNames = {
    "Garcia",    "Smith",    "Okafor", "Tanaka",    "Müller", "Rossi",   "Novak",   "Haddad",
    "Johansson", "Patel",    "Kim",    "Moreau",    "Silva",  "Cohen",   "Ivanova", "Nguyen",
    "Brown",     "Kowalski", "Mensah", "Lindqvist", "Costa",  "Fischer", "Dubois",  "Yilmaz",
    "Andersen",  "Reyes",    "Wright", "Sato",      "Hughes", "Popescu", "Bianchi", "Clarke",
    "Adeyemi",   "Larsen",   "Romero", "Chen",      "Walsh",  "Horvat",  "Bakker",  "Ortiz"};

constexpr std::array<City, 40> kCities = {{
    {"Lyon", "France"},
    {"Oslo", "Norway"},
    {"Nairobi", "Kenya"},
    {"Osaka", "Japan"},
    {"Toronto", "Canada"},
    {"Lisbon", "Portugal"},
    {"Krakow", "Poland"},
    {"Austin", "United States"},
    {"Melbourne", "Australia"},
    {"Seville", "Spain"},
    {"Porto Alegre", "Brazil"},
    {"Edinburgh", "United Kingdom"},
    {"Munich", "Germany"},
    {"Bologna", "Italy"},
    {"Accra", "Ghana"},
    {"Pune", "India"},
    {"Busan", "South Korea"},
    {"Valparaíso", "Chile"},
    {"Tallinn", "Estonia"},
    {"Cork", "Ireland"},
    {"Gothenburg", "Sweden"},
    {"Utrecht", "Netherlands"},
    {"Quebec City", "Canada"},
    {"Marrakesh", "Morocco"},
    {"Hanoi", "Vietnam"},
    {"Auckland", "New Zealand"},
    {"Denver", "United States"},
    {"Izmir", "Turkey"},
    {"Bergen", "Norway"},
    {"Ghent", "Belgium"},
    {"Cusco", "Peru"},
    {"Zurich", "Switzerland"},
    {"Cape Town", "South Africa"},
    {"Kyoto", "Japan"},
    {"Montevideo", "Uruguay"},
    {"Dublin", "Ireland"},
    {"Seattle", "United States"},
    {"Vienna", "Austria"},
    {"Helsinki", "Finland"},
    {"Guadalajara", "Mexico"},
}};

constexpr std::array<std::string_view, 30> kOccupations = {
    "nurse",           "software engineer", "teacher",
    "architect",       "pharmacist",        "carpenter",
    "journalist",      "accountant",        "chef",
    "electrician",     "veterinarian",      "librarian",
    "pilot",           "photographer",      "dentist",
    "translator",      "civil engineer",    "baker",
    "economist",       "firefighter",       "data analyst",
    "physiotherapist", "graphic designer",  "lawyer",
    "mechanic",        "biologist",         "social worker",
    "musician",        "tour guide",        "florist"};

constexpr std::array<std::string_view, 20> kCompanies = {
    "Northwind Traders", "Bluefin Logistics", "Acorn Robotics",  "Harbor Health",
    "Juniper Foods",     "Summit Analytics",  "Redwood Energy",  "Pinecone Games",
    "Silverline Rail",   "Orchid Pharma",     "Granite Bank",    "Lumen Optics",
    "Maple Insurance",   "Cobalt Motors",     "Willow Textiles", "Falcon Airways",
    "Quartz Software",   "Meadow Dairy",      "Beacon Media",    "Atlas Construction"};

constexpr std::array<std::string_view, 20> kEvents = {
    "jazz festival",        "science fair",         "book launch",    "charity run",
    "film festival",        "robotics competition", "farmers market", "chess tournament",
    "photography workshop", "developer conference", "wine tasting",   "marathon",
    "art exhibition",       "startup pitch night",  "choir concert",  "food truck rally",
    "design summit",        "poetry reading",       "trade fair",     "open-air cinema night"};

constexpr std::array<std::string_view, 16> kItems = {
    "apples",    "marbles", "stickers", "pencils",  "books",   "cookies", "stamps", "coins",
    "seashells", "cards",   "balloons", "cupcakes", "buttons", "crayons", "eggs",   "oranges"};

constexpr std::array<std::string_view, 16> kProducts = {
    "notebook", "coffee mug", "T-shirt",  "water bottle", "backpack", "umbrella",
    "lamp",     "scarf",      "puzzle",   "board game",   "candle",   "phone charger",
    "teapot",   "desk plant", "cookbook", "pair of socks"};

}  // namespace

Words first_names() { return kFirstNames; }
Words last_names() { return kLastNames; }
std::span<const City> cities() { return kCities; }
Words occupations() { return kOccupations; }
Words companies() { return kCompanies; }
Words event_names() { return kEvents; }
Words countable_items() { return kItems; }
Words shop_products() { return kProducts; }

}  // namespace afm::data::synth
